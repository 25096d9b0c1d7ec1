import Foundation
import PinsetHTTP
import PinsetServer
import PinsetTestSupport
import Testing

@Suite("Transport: serving requests")
struct TransportServerTests {
    @Test(arguments: SocketTransport.available)
    func getWithARawSocket(_ transport: SocketTransport) async throws {
        let log = TransportLogCollector()
        let (server, port) = try startTransportServer(on: transport, log: log)
        defer { Task { await server.shutdown(gracePeriod: .zero) } }
        #expect(port != 0)
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: localhost\r\nUser-Agent: raw-test\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "hello\n")
        #expect(response.header("Content-Length") == "6")
        #expect(response.header("Content-Type") == "text/plain")
        #expect(response.header("Date")?.hasSuffix(" GMT") == true)
        #expect(response.header("Connection") == nil)
        #expect(await transportEventually { log.all.count == 1 })
        let entry = try #require(log.all.first)
        #expect(entry.remoteAddress == "127.0.0.1")
        #expect(entry.method == "GET")
        #expect(entry.target == "/hello")
        #expect(entry.status == 200)
        #expect(entry.bodyBytes == 6)
        #expect(entry.userAgent == "raw-test")
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func getAndHeadWithCurl(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport)
        let get = try ProcessRunner.run("/usr/bin/curl", ["-sS", "-i", "--max-time", "10", "http://127.0.0.1:\(port)/hello"], timeout: 20)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdoutText.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(get.stdoutText.hasSuffix("\r\n\r\nhello\n"))
        let head = try ProcessRunner.run("/usr/bin/curl", ["-sS", "-I", "--max-time", "10", "http://127.0.0.1:\(port)/hello"], timeout: 20)
        #expect(head.status == 0, "\(head.stderr)")
        #expect(head.stdoutText.contains("Content-Length: 6\r\n"))
        #expect(!head.stdoutText.contains("hello"))
        let post = try ProcessRunner.run("/usr/bin/curl", ["-sS", "-i", "--max-time", "10", "-X", "POST", "http://127.0.0.1:\(port)/hello"], timeout: 20)
        #expect(post.stdoutText.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        #expect(post.stdoutText.contains("Allow: GET, HEAD\r\n"))
        let huge = String(repeating: "h", count: 9000)
        let tooLarge = try ProcessRunner.run("/usr/bin/curl", ["-sS", "-i", "--max-time", "10", "-H", "X-Huge: \(huge)", "http://127.0.0.1:\(port)/hello"], timeout: 20)
        #expect(tooLarge.stdoutText.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func keepAliveServesTwoRequestsOnOneConnection(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport)
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        try client.send("GET /missing HTTP/1.1\r\nHost: h\r\n\r\n")
        let second = try client.readResponse()
        #expect(second.status == 404)
        #expect(second.bodyText == "not found\n")
        // An optimized build may release the client after its last use, closing its socket.
        withExtendedLifetime(client) {
            #expect(server.openConnections == 1)
        }
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func pipelinedRequestsAreAnsweredInOrder(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport)
        let client = try TransportTestClient(port: port)
        try client.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\nHEAD /hello HTTP/1.1\r\nHost: h\r\n\r\n"
            + "GET /big?n=100000 HTTP/1.1\r\nHost: h\r\n\r\nGET /nope HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(try client.readResponse().bodyText == "hello\n")
        let head = try client.readResponse(bodyExpected: false)
        #expect(head.header("Content-Length") == "6")
        let big = try client.readResponse()
        #expect(big.body.count == 100_000)
        let last = try client.readResponse()
        #expect(last.status == 404)
        #expect(last.header("Connection") == "close")
        #expect(client.readToEnd().ending == .closed)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func protocolErrorIsAnsweredLoggedAndClosed(_ transport: SocketTransport) async throws {
        let log = TransportLogCollector()
        let (server, port) = try startTransportServer(on: transport, log: log)
        let client = try TransportTestClient(port: port)
        try client.send("GET /smuggle HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
        let rest = client.readToEnd()
        #expect(rest.ending == .closed)
        #expect(rest.bytes.isEmpty, "the smuggled request must not be answered")
        #expect(await transportEventually { log.all.count == 1 })
        #expect(log.all.first?.status == 400)
        #expect(log.all.first?.target == "/smuggle")
        #expect(await transportEventually { server.openConnections == 0 })
        await server.shutdown(gracePeriod: .seconds(1))
    }

    @Test(arguments: SocketTransport.available)
    func secondServerOnTheSamePortFailsClearly(_ transport: SocketTransport) async throws {
        let (server, port) = try startTransportServer(on: transport)
        let other = SocketServer(configuration: SocketServerConfiguration(port: port, transport: transport), handler: TransportTestHandler())
        #expect(throws: SocketServerError(.addressInUse, "")) { try other.start() }
        #expect(throws: SocketServerError(.alreadyStarted, "")) { try server.start() }
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
