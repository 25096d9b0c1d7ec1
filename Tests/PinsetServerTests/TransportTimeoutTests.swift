import PinsetHTTP
import PinsetServer
import Testing

@Suite("Transport: deadlines")
struct TransportTimeoutTests {
    @Test(arguments: SocketTransport.available)
    func slowClientIsCutOffAtTheRequestHeadTimeout(_ transport: SocketTransport) async throws {
        let log = TransportLogCollector()
        let (server, port) = try startTransportServer(
            on: transport, SocketServerConfiguration(requestHeadTimeout: .seconds(1), idleTimeout: .seconds(30)), log: log)
        // Taken before connecting: the server's deadline starts at accept, so the lower bound below holds however
        // late this thread runs.
        let start = ContinuousClock.now
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\n")
        let result = client.readToEnd(timeout: .seconds(20))
        let elapsed = ContinuousClock.now - start
        #expect(result.ending == .closed)
        #expect(String(decoding: result.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        // The head deadline (1 s), not the idle timeout (30 s), ended it; the upper bound leaves room for load.
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < .seconds(20))
        #expect(await transportEventually { log.all.map(\.status) == [408] })
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func silentConnectionIsClosedAtTheHeadTimeoutNotTheIdleTimeout(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(
            on: transport, SocketServerConfiguration(requestHeadTimeout: .seconds(1), idleTimeout: .seconds(60)))
        let client = try TransportTestClient(port: port)
        // Only the server closes an accepted connection, so the close itself shows it was accepted; polling for
        // the open connection would race the 1 s deadline on a loaded machine.
        let start = ContinuousClock.now
        let result = client.readToEnd(timeout: .seconds(20))
        let elapsed = ContinuousClock.now - start
        #expect(result.ending == .closed)
        #expect(result.bytes.isEmpty)
        // The head deadline (1 s from accept), not the idle timeout (60 s), ended it; the bound leaves room for load.
        #expect(elapsed < .seconds(20))
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func idleKeepAliveConnectionIsClosedSilently(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(
            on: transport, SocketServerConfiguration(requestHeadTimeout: .seconds(60), idleTimeout: .seconds(1)))
        let client = try TransportTestClient(port: port)
        // The head timeout (60 s) is past the read's 20 s: only the idle timeout can close it in time. The start is
        // taken before the request: the idle deadline starts once the response is written.
        let start = ContinuousClock.now
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        let result = client.readToEnd()
        #expect(result.ending == .closed)
        #expect(result.bytes.isEmpty)
        #expect(ContinuousClock.now - start >= .milliseconds(900))
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func connectionCloseRequestIsClosedAtOnceWithoutWaitingForThePeer(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport, SocketServerConfiguration(lingerTimeout: .seconds(60)))
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        let result = client.readToEnd(timeout: .seconds(20))
        #expect(result.ending == .closed)
        #expect(String(decoding: result.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
        // The client still holds its socket open; the server did not linger for it (60 s).
        #expect(await transportEventually { server.openConnections == 0 })
        withExtendedLifetime(client) {}
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func aLargeResponseStillInFlightWhenClosedAtOnceArrivesWhole(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport, SocketServerConfiguration(lingerTimeout: .seconds(60)))
        let client = try TransportTestClient(port: port)
        let size = 4 * 1024 * 1024
        try client.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        // Nothing is read until the socket buffers are full, so that the server closes while the end of the
        // response is still queued in the kernel: closing must send it, then a FIN, never a reset.
        try await Task.sleep(for: .milliseconds(300))
        let result = client.readToEnd(timeout: .seconds(20))
        #expect(result.ending == .closed)
        let separator = Array("\r\n\r\n".utf8)
        let headEnd = try #require(result.bytes.indices.first { result.bytes[$0...].starts(with: separator) }) + separator.count
        #expect(String(decoding: result.bytes[..<headEnd], as: UTF8.self).contains("Content-Length: \(size)\r\n"))
        #expect(result.bytes.count - headEnd == size)
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func inputAfterTheLastRequestStillGetsALingeringClose(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport, SocketServerConfiguration(lingerTimeout: .seconds(60)))
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /unanswered HTTP/1.1\r\n\r\n")
        let result = client.readToEnd(timeout: .seconds(20))
        #expect(result.ending == .closed, "the response arrives whole, followed by a FIN, not a reset")
        #expect(String(decoding: result.bytes, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(server.openConnections == 1, "the server discards input until the peer closes")
        client.shutdownWrite()
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
