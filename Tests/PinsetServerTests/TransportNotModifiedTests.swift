import PinsetHTTP
import PinsetServer
import Testing

@Suite("Transport: 304 on a persistent connection")
struct TransportNotModifiedTests {
    /// `TransportTestClient` frames every response by its `Content-Length`, as http_parser-based clients (wrk) do:
    /// a 304 that announced the 200's length would make it wait for bytes that never come.
    @Test func notModifiedDoesNotStallAClientThatFramesByContentLength() async throws {
        let handler = try PinsetRequestHandlerTests.handler(now: PinsetRequestHandlerTests.signedAt + 10)
        let (server, port) = try startTransportServer(handler: handler)
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
}
