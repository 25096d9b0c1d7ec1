import Foundation

/// An HTTP response as far as the updater cares: the status, the body, and the server's clock.
public struct FetchedBundle: Sendable {
    public var statusCode: Int
    public var body: [UInt8]
    /// The response's `Date` header (RFC 9110 6.6.1), when the server sent a valid one. Never trusted for a
    /// decision: it only sharpens the clock-skew estimate when a bundle is refused because of the device clock.
    public var serverDate: Date?

    public init(statusCode: Int, body: [UInt8], serverDate: Date? = nil) {
        self.statusCode = statusCode
        self.body = body
        self.serverDate = serverDate
    }
}

extension FetchedBundle {
    /// The time an HTTP `Date` header value names: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form
    /// RFC 9110 5.6.7 lets a server send; anything else is `nil`.
    public static func parseHTTPDate(_ value: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: value)
    }
}

/// Downloads a signed bundle. The default is `URLSessionBundleFetcher`; tests and apps with their own HTTP
/// stack provide another.
///
/// An implementation must give up after `timeout` and must stop reading once the body exceeds
/// `maximumBodySize` (throw `PinUpdateError(.bodyTooLarge, …)`) rather than buffer an endless response. It
/// should not follow redirects. Any error it throws that is not a `PinUpdateError` is reported as
/// `.transport`. The updater checks the status and the size again, so a lax fetcher cannot weaken either.
public protocol BundleFetcher: Sendable {
    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle

    /// Like `fetch(from:timeout:maximumBodySize:)`, telling the server the content version of the verified
    /// pins in force (nil when there are none) so that its operator can see how far a pin change has spread.
    /// Send it as the `Pinset-Version` request header (decimal digits), and send no header when it is nil.
    /// The default implementation ignores it, so fetchers written before it keep working.
    func fetch(from url: URL, heldVersion: Int64?, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle
}

extension BundleFetcher {
    public func fetch(from url: URL, heldVersion: Int64?, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        try await fetch(from: url, timeout: timeout, maximumBodySize: maximumBodySize)
    }
}
