import Foundation
import PinsetHTTP
import PinsetLiveCheck
import PinsetServer
import Testing

@Suite("Transport: PROXY protocol")
struct TransportProxyProtocolTests {
    static func start(_ transport: SocketTransport, perAddress: Int = 32, headTimeout: Duration = .seconds(2), trustedProxies: [IPAddressRange]? = nil,
                      log: TransportLogCollector, events: ConnectionLimitEventCollector) throws -> (SocketServer, UInt16) {
        let configuration = SocketServerConfiguration(
            host: "127.0.0.1", port: 0, maxConnectionsPerAddress: perAddress, requestHeadTimeout: headTimeout,
            proxyProtocol: true, trustedProxies: trustedProxies, workerQueues: 1, transport: transport)
        let server = SocketServer(configuration: configuration, handler: TransportTestHandler(),
                                  onRequest: { log.record($0) }, onConnectionLimit: { events.record($0) })
        return (server, try server.start())
    }

    @Test(arguments: SocketTransport.available)
    func clientAddressComesFromTheHeaderInLogsAndLimits(_ transport: SocketTransport) async throws {
        let log = TransportLogCollector()
        let events = ConnectionLimitEventCollector()
        // Not about deadlines: a head timeout no stall of a loaded machine reaches, so none can close a client early.
        let (server, port) = try Self.start(transport, perAddress: 1, headTimeout: .seconds(30), log: log, events: events)
        let first = try TransportTestClient(port: port)
        try first.send("PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\nGET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try first.readResponse().status == 200)
        #expect(await transportEventually { log.all.map(\.remoteAddress) == ["203.0.113.7"] })

        // The same client through the same balancer address is over its limit of 1; another client is not.
        let second = try TransportTestClient(port: port)
        try second.send("PROXY TCP4 203.0.113.7 192.0.2.1 51001 443\r\nGET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(String(decoding: second.readToEnd().bytes, as: UTF8.self).hasPrefix("HTTP/1.1 503 "))
        #expect(events.count(.refusedPerAddress) == 1)

        let v2Header: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A,
                                 0x21, 0x11, 0x00, 0x0C, 198, 51, 100, 9, 192, 0, 2, 1, 0xD4, 0x31, 0x01, 0xBB]
        let third = try TransportTestClient(port: port)
        try third.send(bytes: v2Header + Array("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(try third.readResponse().status == 200)
        #expect(await transportEventually { log.all.map(\.remoteAddress) == ["203.0.113.7", "198.51.100.9"] })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// A peer that reaches the port directly, not the balancer, and writes a header naming any client it likes: with
    /// trusted proxies configured it is closed unanswered and counted, whatever its header says; the balancer's
    /// connections are served with the client address from theirs.
    @Test(arguments: SocketTransport.available)
    func onlyTrustedProxiesMayNameTheClient(_ transport: SocketTransport) async throws {
        let log = TransportLogCollector()
        let events = ConnectionLimitEventCollector()
        let (server, port) = try Self.start(transport, headTimeout: .seconds(30), trustedProxies: [try IPAddressRange(parsing: "127.0.0.2/32")], log: log, events: events)
        let direct = try TransportTestClient(port: port, sourceAddress: "127.0.0.3")
        try? direct.send("PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\nGET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        let refused = direct.readToEnd()
        #expect(refused.ending != .stillOpen && refused.bytes.isEmpty, "\(refused)")
        #expect(await transportEventually { events.count(.untrustedProxy) == 1 })

        let balancer = try TransportTestClient(port: port, sourceAddress: "127.0.0.2")
        try balancer.send("PROXY TCP4 198.51.100.9 192.0.2.1 51000 443\r\nGET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try balancer.readResponse().status == 200)
        #expect(await transportEventually { log.all.map(\.remoteAddress) == ["198.51.100.9"] })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func connectionWithoutAHeaderIsClosedUnanswered(_ transport: SocketTransport) async throws {
        let log = TransportLogCollector()
        let events = ConnectionLimitEventCollector()
        let (server, port) = try Self.start(transport, log: log, events: events)
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        let result = client.readToEnd()
        #expect(result.ending != .stillOpen)
        #expect(result.bytes.isEmpty)
        #expect(log.all.isEmpty)
        // Counted, so that a balancer sending no header shows in the metrics.
        #expect(await transportEventually { events.count(.invalidProxyHeader) == 1 })

        // A header that never completes is cut at the request-head deadline (2 s), counted from accept.
        let slow = try TransportTestClient(port: port)
        try slow.send("PROXY TCP4 203.0.113.7")
        let cut = slow.readToEnd(timeout: .seconds(20))
        #expect(cut.ending == .closed)
        #expect(cut.bytes.isEmpty)
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
