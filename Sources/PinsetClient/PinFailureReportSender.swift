import Foundation
import PinsetCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one pin-failure report; returns the HTTP status. Tests substitute their own.
public protocol PinFailureReportSender: Sendable {
    func send(_ report: [UInt8], to url: URL, timeout: Duration) async throws -> Int
}

/// Sends reports with an ephemeral `URLSession` that keeps nothing and follows no redirect (a redirected POST
/// would arrive as a GET without its report): a 3xx is returned as it is, and the report stays queued. The
/// server's certificate is checked against the platform's trust roots alone, never against the pins, so a
/// report about a broken pin set still reaches the trust server.
public struct URLSessionPinFailureReportSender: PinFailureReportSender {
    public init() {}

    public func send(_ report: [UInt8], to url: URL, timeout: Duration) async throws -> Int {
        let seconds = max(timeout.timeInterval, 0.001)
        let session = URLSession(configuration: .keepingNothing(timeout: seconds), delegate: RedirectRefusal(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(PinsetRelease.userAgent, forHTTPHeaderField: "User-Agent")
        request.httpBody = Data(report)
        let (_, response) = try await session.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}

private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
