import Foundation
import PinsetHTTP
import PinsetServer
import Testing

@Suite("Transport: graceful shutdown")
struct TransportShutdownTests {
    @Test(arguments: SocketTransport.available)
    func shutdownFinishesAnInFlightResponseClosesIdleConnectionsAndRefusesNewOnes(_ transport: SocketTransport) async throws {
        let counts = CountRecorder()
        let handler = AnsweredPathRecorder()
        let server = SocketServer(
            configuration: SocketServerConfiguration(workerQueues: 2, transport: transport),
            handler: handler,
            onRequest: { _ in },
            onConnectionCountChange: { counts.record($0) }
        )
        let port = try server.start()
        let idle = try TransportTestClient(port: port)
        try idle.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try idle.readResponse().status == 200)

        // 32 MiB cannot fit in the loopback socket buffers, so most of it is still queued in the server.
        let size = 32 * 1024 * 1024
        let busy = try TransportTestClient(port: port)
        try busy.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\r\n")
        // The shutdown must find the response under way: a connection whose request the server has not read yet
        // is one it may close (on a loaded machine a fixed pause is not enough for the read).
        #expect(await transportEventually(timeout: .seconds(60)) { handler.answered.contains("/big") }, "the server answers the big request")

        // The shutdown runs on the cooperative pool, so the reads that wait for it run on threads of their own;
        // their bounds only keep a broken shutdown from holding the test.
        let shutdown = Task { await server.shutdown(gracePeriod: .seconds(20)) }
        let idleEnding = await offThePool { idle.readToEnd(timeout: .seconds(60)).ending }
        #expect(idleEnding == .closed, "an idle keep-alive connection is closed")
        #expect(await transportEventually(timeout: .seconds(60)) { (try? TransportTestClient(port: port)) == nil }, "new connections are refused")

        let response = try await offThePool { try busy.readResponse(timeout: .seconds(60)) }
        #expect(response.status == 200)
        #expect(response.body.count == size)
        #expect(response.body.first == UInt8(ascii: "z") && response.body.last == UInt8(ascii: "z"))
        let busyEnding = await offThePool { busy.readToEnd(timeout: .seconds(60)).ending }
        #expect(busyEnding == .closed)

        await shutdown.value
        #expect(server.openConnections == 0)
        #expect(counts.values.last == 0)
        #expect(counts.values.max() == 2)
    }

    @Test(arguments: SocketTransport.available)
    func shutdownWithoutConnectionsReturnsPromptlyAndTwice(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport)
        let start = ContinuousClock.now
        await server.shutdown(gracePeriod: .seconds(900))
        await server.shutdown(gracePeriod: .seconds(900))
        // Far below the grace period (it must not be waited out), with room for a loaded machine whose other tests
        // may hold the threads this one resumes on for many seconds.
        #expect(ContinuousClock.now - start < .seconds(120))
        #expect(throws: TransportTestClient.Failure.self) { try TransportTestClient(port: port) }
    }
}

/// ``TransportTestHandler``, recording the path of each request it has answered.
final class AnsweredPathRecorder: HTTPRequestHandler, @unchecked Sendable {
    // The lock guards `paths`; `handle` runs on the server's loop threads.
    private let lock = NSLock()
    private var paths: [String] = []
    private let inner = TransportTestHandler()

    var answered: [String] { lock.withLock { paths } }

    func handle(_ request: HTTPRequestHead) -> HTTPResponse {
        let response = inner.handle(request)
        lock.withLock { paths.append(String(request.path)) }
        return response
    }
}

/// Records connection counts reported by the server.
final class CountRecorder: @unchecked Sendable {
    // The lock guards `recorded`; `record` is called on the server's notification queue.
    private let lock = NSLock()
    private var recorded: [Int] = []

    var values: [Int] { lock.withLock { recorded } }

    func record(_ value: Int) { lock.withLock { recorded.append(value) } }
}
