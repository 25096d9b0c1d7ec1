import PinsetHTTP
import PinsetServer
import Testing

@Suite("Transport: connection limit")
struct TransportConnectionLimitTests {
    @Test(arguments: SocketTransport.available)
    func connectionsOverTheLimitGet503AndTheServerRecovers(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport, SocketServerConfiguration(maxConnections: 2, workerQueues: 1))
        var held = [try TransportTestClient(port: port), try TransportTestClient(port: port)]
        // Connections in the middle of a request (a head half arrived) are never closed to make room.
        for client in held {
            // In one send, so that the half head has arrived by the time the first answer is read.
            try client.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\nGET /hello HTTP/1.1\r\nHo")
            #expect(try client.readResponse().status == 200)
        }
        #expect(await transportEventually { server.openConnections == 2 })

        for _ in 0..<3 {
            let extra = try TransportTestClient(port: port)
            try? extra.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
            let result = extra.readToEnd()
            #expect(result.ending != .stillOpen)
            // The 503 is queued before the close; Linux delivers queued bytes before reporting a later reset.
            let text = String(decoding: result.bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(text)")
            #expect(server.openConnections == 2)
        }
        let refused = try TransportTestClient(port: port)
        #expect(String(decoding: refused.readToEnd().bytes, as: UTF8.self).hasPrefix("HTTP/1.1 503 "))

        try held[0].send("st: h\r\n\r\n")
        #expect(try held[0].readResponse().status == 200, "connections under the limit keep working")
        held.removeAll()
        #expect(await transportEventually { server.openConnections == 0 })

        let normal = try TransportTestClient(port: port)
        try normal.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try normal.readResponse().bodyText == "hello\n")
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
