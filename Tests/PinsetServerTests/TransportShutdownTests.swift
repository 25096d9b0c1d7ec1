import Foundation
import PinsetHTTP
import PinsetServer
import Testing

@Suite("Transport: graceful shutdown")
struct TransportShutdownTests {
    @Test(arguments: SocketTransport.available)
    func shutdownFinishesAnInFlightResponseClosesIdleConnectionsAndRefusesNewOnes(_ transport: SocketTransport) async throws {
        let counts = CountRecorder()
        let server = SocketServer(
            configuration: SocketServerConfiguration(workerQueues: 2, transport: transport),
            handler: TransportTestHandler(),
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
        try await Task.sleep(for: .milliseconds(100))

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
        await server.shutdown(gracePeriod: .seconds(30))
        await server.shutdown(gracePeriod: .seconds(30))
        // Far below the 30 s grace period (it must not be waited out), with room for a loaded machine.
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(throws: TransportTestClient.Failure.self) { try TransportTestClient(port: port) }
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
