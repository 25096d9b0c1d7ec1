#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import PinsetHTTP
import PinsetServer
import PinsetTestSupport

/// A blocking POSIX TCP client for transport tests. Every read has a deadline, so a test never hangs.
final class TransportTestClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// How a connection ended while reading to its end.
    enum Ending: Equatable {
        case closed
        case reset
        case stillOpen
    }

    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port` from `sourceAddress` (any of 127.0.0.0/8, which Linux routes to the loopback
    /// interface, so tests can act as several client addresses); throws when the connection is refused.
    init(port: UInt16, sourceAddress: String = "127.0.0.1") throws {
        do {
            // Reads wait 50 ms at a time, so that the reading loops below can check their own deadlines.
            fd = try LoopbackPort.connect(to: Int(port), from: sourceAddress, readTimeout: .milliseconds(50))
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    deinit {
        close(fd)
    }

    /// Sends a FIN: the server sees the end of input while this side can still read.
    func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    func send(_ text: String) throws {
        try send(bytes: Array(text.utf8))
    }

    func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { SystemCall.send(fd, $0) }
            guard sent > 0 else { throw Failure(description: "send() failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads one response. `bodyExpected: false` is for HEAD, whose Content-Length describes no bytes on the wire.
    func readResponse(bodyExpected: Bool = true, timeout: Duration = .seconds(20)) throws -> Response {
        let deadline = ContinuousClock.now + timeout
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find([13, 10, 13, 10], in: pending).map { $0 + 4 }
            if headEnd == nil { try readMore(until: deadline) }
        }
        let headText = String(decoding: pending[..<headEnd!], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(headText)")
        }
        let headers = lines.map { line -> (String, String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, headers: headers, body: [])
        let length = bodyExpected ? Int(response.header("Content-Length") ?? "0") ?? 0 : 0
        while pending.count < headEnd! + length { try readMore(until: deadline) }
        response.body = Array(pending[headEnd!..<(headEnd! + length)])
        pending.removeFirst(headEnd! + length)
        return response
    }

    /// Reads until the server closes or resets the connection, or `timeout` passes; returns what arrived.
    func readToEnd(timeout: Duration = .seconds(20)) -> (bytes: [UInt8], ending: Ending) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch readOnce() {
            case .data: continue
            case .wouldBlock: continue
            case .endOfFile: return (takePending(), .closed)
            case .error: return (takePending(), .reset)
            }
        }
        return (takePending(), .stillOpen)
    }

    private func takePending() -> [UInt8] {
        defer { pending = [] }
        return pending
    }

    private enum ReadOutcome { case data, wouldBlock, endOfFile, error }

    private func readOnce() -> ReadOutcome {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if received > 0 {
            pending.append(contentsOf: chunk[..<received])
            return .data
        }
        if received == 0 { return .endOfFile }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .error
    }

    private func readMore(until deadline: ContinuousClock.Instant) throws {
        while ContinuousClock.now < deadline {
            switch readOnce() {
            case .data: return
            case .wouldBlock: continue
            case .endOfFile: throw Failure(description: "connection closed after \(pending.count) bytes")
            case .error: throw Failure(description: "connection reset after \(pending.count) bytes")
            }
        }
        throw Failure(description: "timed out after \(pending.count) bytes")
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// Collects access log entries from the server's worker queues.
final class TransportLogCollector: @unchecked Sendable {
    // The lock guards `entries`; `record` is called from the server's worker queues.
    private let lock = NSLock()
    private var entries: [AccessLogEntry] = []

    var all: [AccessLogEntry] { lock.withLock { entries } }

    func record(_ entry: AccessLogEntry) { lock.withLock { entries.append(entry) } }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
/// A client's reads block, so a test that must not hold a thread of the cooperative pool (two on two cores, which
/// the server's own async work needs) hands them to a thread of its own with ``offThePool(_:)``. A client is still
/// used by one test at a time: the test awaits the read it handed over.
extension TransportTestClient: @unchecked Sendable {}

/// Runs `body` on a thread of its own and waits for it without holding a thread of the cooperative pool.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// ``offThePool(_:)`` for work that cannot throw.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

func transportEventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A handler for transport tests: `/hello` says hello, `/big?n=...` sends `n` bytes, anything else is 404.
struct TransportTestHandler: HTTPRequestHandler {
    func handle(_ request: HTTPRequestHead) -> HTTPResponse {
        switch request.path {
        case "/hello":
            return HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain")], body: Array("hello\n".utf8))
        case "/big":
            let size = request.query.flatMap { Int($0.dropFirst(2)) } ?? 0
            return HTTPResponse(body: [UInt8](repeating: UInt8(ascii: "z"), count: size))
        default:
            return HTTPResponse(status: .notFound, body: Array("not found\n".utf8))
        }
    }
}

/// Starts a server on an ephemeral port of 127.0.0.1 with `configuration` on `transport` (each transport suite runs
/// once per ``SocketTransport/available`` transport).
func startTransportServer(
    on transport: SocketTransport,
    _ configuration: SocketServerConfiguration = SocketServerConfiguration(),
    handler: any HTTPRequestHandler = TransportTestHandler(),
    log: TransportLogCollector = TransportLogCollector()
) throws -> (server: SocketServer, port: UInt16) {
    var configuration = configuration
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.transport = transport
    let server = SocketServer(configuration: configuration, handler: handler, onRequest: { log.record($0) })
    let port = try server.start()
    return (server, port)
}
