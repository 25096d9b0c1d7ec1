import PinsetHTTP
import PinsetServer
import Testing

@Suite("Transport: 304 on a persistent connection")
struct TransportNotModifiedTests {
    /// `TransportTestClient` frames every response by its `Content-Length`, as http_parser-based clients (wrk) do:
    /// a 304 that announced the 200's length would make it wait for bytes that never come.
    @Test(arguments: SocketTransport.available)
    func notModifiedDoesNotStallAClientThatFramesByContentLength(_ transport: SocketTransport) async throws {
        let handler = try PinsetRequestHandlerTests.handler(now: PinsetRequestHandlerTests.signedAt + 10)
        let (server, port) = try startTransportServer(on: transport, handler: handler)
        let client = try TransportTestClient(port: port)
        try client.send("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n")
        let full = try client.readResponse()
        #expect(full.status == 200)
        let etag = try #require(full.header("ETag"))

        try client.send("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\nIf-None-Match: \(etag)\r\n\r\n")
        let notModified = try client.readResponse(timeout: .seconds(5))
        #expect(notModified.status == 304)
        #expect(notModified.header("Content-Length") == nil)
        #expect(notModified.header("ETag") == etag)
        #expect(notModified.header("Date") != nil)
        #expect(notModified.header("Last-Modified") == full.header("Last-Modified"))
        #expect(notModified.header("Cache-Control") == full.header("Cache-Control"))

        try client.send("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n")
        let again = try client.readResponse(timeout: .seconds(5))
        #expect(again.status == 200)
        #expect(again.body == full.body)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// The tag on the second of two If-None-Match lines, sent as raw bytes on one socket, gets the 304.
    @Test(arguments: SocketTransport.available)
    func theSecondIfNoneMatchLineCounts(_ transport: SocketTransport) async throws {
        let handler = try PinsetRequestHandlerTests.handler(now: PinsetRequestHandlerTests.signedAt + 10)
        let (server, port) = try startTransportServer(on: transport, handler: handler)
        let client = try TransportTestClient(port: port)
        try client.send("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n")
        let etag = try #require(try client.readResponse().header("ETag"))
        try client.send("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"old\"\r\nIf-None-Match: \(etag)\r\n\r\n")
        #expect(try client.readResponse(timeout: .seconds(5)).status == 304)
        try client.send("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"old\"\r\nIf-None-Match: \"older\"\r\n\r\n")
        #expect(try client.readResponse(timeout: .seconds(5)).status == 200)
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
