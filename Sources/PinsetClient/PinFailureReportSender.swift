import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one pin-failure report; returns the HTTP status. Tests substitute their own.
public protocol PinFailureReportSender: Sendable {
    func send(_ report: [UInt8], to url: URL, timeout: Duration) async throws -> Int
}

/// Sends reports with an ephemeral `URLSession` that has no delegate: the server's certificate is checked
/// against the platform's trust roots alone, never against the pins, so a report about a broken pin set still
/// reaches the trust server. Nothing is cached or stored.
public struct URLSessionPinFailureReportSender: PinFailureReportSender {
    public init() {}

    public func send(_ report: [UInt8], to url: URL, timeout: Duration) async throws -> Int {
        let seconds = max(timeout.timeInterval, 0.001)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(report)
        let (_, response) = try await session.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}
