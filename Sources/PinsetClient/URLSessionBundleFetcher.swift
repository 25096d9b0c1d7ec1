import Foundation
import PinsetCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches bundles with Foundation's `URLSession`.
///
/// Each fetch uses its own ephemeral session: no cookies, no cache, no credential store, so nothing from one
/// fetch influences the next. Under hostile input:
/// - a `Content-Length` over the limit cancels the request before any body is read, and a body that grows
///   past the limit while streaming (chunked, or a lying length) is cancelled as soon as it does — memory use
///   is bounded by the limit plus one network read;
/// - a non-200 status cancels the transfer at once (its body is never read), and redirects are not followed,
///   so a 3xx surfaces as `.httpStatus`;
/// - the whole exchange, connection included, is bounded by `timeout` as a deadline: a server that trickles
///   the head or the body byte by byte is cut off when it passes, however steadily the bytes come (URLSession's
///   own timeouts restart with every byte received on Linux); task cancellation cancels it too.
///
/// Thread-safe: a stateless value; concurrent fetches use separate sessions.
public struct URLSessionBundleFetcher: BundleFetcher {
    /// The request header naming the content version the client holds (``HeldVersionHeader/name``).
    public static let heldVersionHeader = HeldVersionHeader.name

    public init() {}

    public func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        try await fetch(from: url, heldVersion: nil, timeout: timeout, maximumBodySize: maximumBodySize)
    }

    public func fetch(from url: URL, heldVersion: Int64?, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        let seconds = max(timeout.timeInterval, 0.001)
        let configuration = URLSessionConfiguration.keepingNothing(timeout: seconds)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.setValue("application/pkcs7-mime, application/octet-stream", forHTTPHeaderField: "Accept")
        request.setValue(PinsetRelease.userAgent, forHTTPHeaderField: "User-Agent")
        if let heldVersion { request.setValue(String(heldVersion), forHTTPHeaderField: Self.heldVersionHeader) }

        let collector = LimitedBodyCollector(limit: maximumBodySize)
        let session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
        // The session retains its delegate until invalidated; this breaks the cycle once the task has ended.
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        let deadline = PinUpdateError(
            .transport, "the exchange with \(url.absoluteString) did not complete within the fetch timeout of \(Self.describe(timeout)); the transfer was cut off"
        )
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FetchedBundle, any Error>) in
                collector.start(task, continuation: continuation, deadline: .now() + seconds, deadlineError: deadline)
            }
        } onCancel: {
            collector.cancel(PinUpdateError(.transport, "the fetch was cancelled"))
        }
    }

    private static func describe(_ timeout: Duration) -> String {
        let seconds = timeout.timeInterval
        return seconds == seconds.rounded() ? "\(Int64(seconds)) s" : "\(seconds) s"
    }
}

/// The session delegate that streams the body into a bounded buffer and completes the fetch exactly once.
///
/// Thread-safe: URLSession calls it on its delegate queue while `cancel` may come from any thread; all state
/// is behind one lock and the continuation is resumed at most once.
final class LimitedBodyCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let limit: Int
    private let lock = NSLock()
    private var body: [UInt8] = []
    private var statusCode: Int?
    private var serverDate: Date?
    private var outcome: (any Error)?
    private var task: URLSessionDataTask?
    private var continuation: CheckedContinuation<FetchedBundle, any Error>?
    private var finished = false
    /// Also what URLSession's own timeouts report: whichever fires first, the caller reads the same reason.
    private var deadlineError: PinUpdateError?

    init(limit: Int) {
        self.limit = limit
    }

    /// Starts `task`, failing the fetch with `deadlineError` if it has not completed by `deadline`.
    func start(
        _ task: URLSessionDataTask, continuation: CheckedContinuation<FetchedBundle, any Error>, deadline: DispatchTime, deadlineError: PinUpdateError
    ) {
        let cancelledEarly: (any Error)? = lock.withLock {
            self.task = task
            self.continuation = continuation
            self.deadlineError = deadlineError
            return outcome
        }
        if let cancelledEarly {
            finish(.failure(cancelledEarly))
            return
        }
        // Weak: a fetch that completed in time releases the collector, and the timer then finds nothing to cancel.
        DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in self?.cancel(deadlineError) }
        task.resume()
    }

    /// Stops the transfer and fails the fetch with `error`, unless it has already completed.
    func cancel(_ error: any Error) {
        let task: URLSessionDataTask? = lock.withLock {
            if outcome == nil { outcome = error }
            return self.task
        }
        task?.cancel()
        finish(.failure(error))
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            fail(PinUpdateError(.transport, "the response is not HTTP"), completionHandler)
            return
        }
        guard http.statusCode == 200 else {
            lock.withLock { statusCode = http.statusCode }
            // The status alone decides; an error page's body is not worth reading.
            completionHandler(.cancel)
            finish(.success(FetchedBundle(statusCode: http.statusCode, body: [])))
            return
        }
        if http.expectedContentLength > Int64(limit) {
            fail(PinUpdateError(.bodyTooLarge, "the server announced \(http.expectedContentLength) bytes; the limit is \(limit)"), completionHandler)
            return
        }
        let date = (http.value(forHTTPHeaderField: "Date")).flatMap(FetchedBundle.parseHTTPDate)
        lock.withLock {
            statusCode = http.statusCode
            serverDate = date
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let exceeded: Bool = lock.withLock {
            guard outcome == nil else { return false }
            if body.count + data.count > limit { return true }
            body.append(contentsOf: data)
            return false
        }
        if exceeded {
            cancel(PinUpdateError(.bodyTooLarge, "the body grew past the \(limit)-byte limit; the transfer was cut off"))
        }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Not following: the 3xx response is delivered and reported as a status other than 200.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let result: Result<FetchedBundle, any Error> = lock.withLock {
            if let outcome { return .failure(outcome) }
            if let error, (error as NSError).code == NSURLErrorTimedOut, let deadlineError { return .failure(deadlineError) }
            if let error { return .failure(PinUpdateError(.transport, "the request failed: \(error.localizedDescription)")) }
            guard let statusCode else { return .failure(PinUpdateError(.transport, "the server sent no response")) }
            return .success(FetchedBundle(statusCode: statusCode, body: body, serverDate: serverDate))
        }
        finish(result)
    }

    private func fail(_ error: PinUpdateError, _ completionHandler: (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { if outcome == nil { outcome = error } }
        completionHandler(.cancel)
        finish(.failure(error))
    }

    private func finish(_ result: Result<FetchedBundle, any Error>) {
        let continuation: CheckedContinuation<FetchedBundle, any Error>? = lock.withLock {
            guard !finished, let continuation = self.continuation else { return nil }
            finished = true
            self.continuation = nil
            return continuation
        }
        continuation?.resume(with: result)
    }
}

extension URLSessionConfiguration {
    /// Ephemeral, with no cookies, cache or credential store, so that nothing from one exchange influences the
    /// next; each request and the whole exchange, connection included, bounded by `seconds`.
    static func keepingNothing(timeout seconds: TimeInterval) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        return configuration
    }
}
