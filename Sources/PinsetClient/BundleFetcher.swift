import Foundation

/// An HTTP response as far as the updater cares: the status and the body.
public struct FetchedBundle: Sendable {
    public var statusCode: Int
    public var body: [UInt8]

    public init(statusCode: Int, body: [UInt8]) {
        self.statusCode = statusCode
        self.body = body
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
