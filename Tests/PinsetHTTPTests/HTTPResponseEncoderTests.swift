import PinsetHTTP
import Testing

@Suite("HTTPResponseEncoder")
struct HTTPResponseEncoderTests {
    private func encode(
        _ response: HTTPResponse,
        omitBody: Bool = false,
        connection: HTTPResponseEncoder.ConnectionField = .none
    ) -> (text: String, summary: HTTPResponseEncoder.Summary, output: HTTPOutboundBuffer) {
        var encoder = HTTPResponseEncoder()
        var output = HTTPOutboundBuffer()
        let summary = encoder.encode(response, omitBody: omitBody, connection: connection,
                                     unixSeconds: rfcExampleSeconds, into: &output)
        return (text(output.readableBytes), summary, output)
    }

    @Test func exactBytesOfA200() {
        let result = encode(HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain")], body: bytes("hello")))
        #expect(result.text == """
            HTTP/1.1 200 OK\r
            Date: Sun, 06 Nov 1994 08:49:37 GMT\r
            Content-Type: text/plain\r
            Content-Length: 5\r
            \r
            hello
            """)
        #expect(result.summary == .init(status: .ok, bodyBytes: 5))
    }

    @Test func headKeepsContentLengthButOmitsTheBody() {
        let result = encode(HTTPResponse(body: bytes("hello")), omitBody: true, connection: .close)
        #expect(result.text == "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 5\r\nConnection: close\r\n\r\n")
        #expect(result.summary.bodyBytes == 0)
    }

    @Test func notModifiedNeverCarriesContentLengthOrBody() {
        let withBody = encode(HTTPResponse(status: .notModified, headers: [("ETag", "\"v1\""), ("Content-Length", "10")], body: bytes("0123456789")))
        #expect(withBody.text == "HTTP/1.1 304 Not Modified\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nETag: \"v1\"\r\n\r\n")
        #expect(withBody.summary.bodyBytes == 0)
        let empty = encode(HTTPResponse(status: .notModified))
        #expect(empty.text == "HTTP/1.1 304 Not Modified\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")
    }

    @Test func http10KeepAliveIsAnnounced() {
        let result = encode(HTTPResponse(), connection: .keepAlive)
        #expect(result.text.contains("\r\nConnection: keep-alive\r\n"))
        #expect(result.text.hasSuffix("Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"))
    }

    @Test func handlerCannotOverrideFraming() {
        let result = encode(HTTPResponse(
            headers: [("content-length", "999"), ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"),
                      ("DATE", "yesterday"), ("X-Kept", "yes")],
            body: bytes("ab")))
        #expect(result.text == "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Kept: yes\r\nContent-Length: 2\r\n\r\nab")
    }

    @Test(arguments: [
        [("X-Evil", "a\r\nSet-Cookie: stolen=1")],
        [("X-Evil", "a\u{0}b")],
        [("Bad Name", "v")],
        [("", "v")],
    ])
    func responseSplittingIsTurnedIntoA500(headers: [(String, String)]) {
        let result = encode(HTTPResponse(headers: headers, body: bytes("secret")))
        #expect(result.text.hasPrefix("HTTP/1.1 500 Internal Server Error\r\n"))
        #expect(!result.text.contains("stolen"))
        #expect(!result.text.contains("secret"))
        #expect(result.summary.status == .internalServerError)
    }

    @Test func invalidStatusIsTurnedIntoA500() {
        let result = encode(HTTPResponse(status: HTTPStatus(code: 200, reason: "OK\r\nX-Injected: 1")))
        #expect(result.text.hasPrefix("HTTP/1.1 500 "))
        #expect(!result.text.contains("X-Injected"))
    }

    @Test func largeBodiesAreQueuedByReferenceSmallOnesCoalesced() {
        let small = encode(HTTPResponse(body: [UInt8](repeating: 1, count: 2048)))
        #expect(small.output.chunkCount == 1)
        let large = encode(HTTPResponse(body: [UInt8](repeating: 7, count: HTTPOutboundBuffer.coalescingLimit + 1)))
        #expect(large.output.chunkCount == 2)
        #expect(large.output.readableBytes.suffix(HTTPOutboundBuffer.coalescingLimit + 1).allSatisfy { $0 == 7 })
    }

    @Test func cannedResponseHasNoDateAndCloses() {
        let canned = text(HTTPResponseEncoder.cannedResponse(.error(.serviceUnavailable)))
        #expect(canned == """
            HTTP/1.1 503 Service Unavailable\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Length: 20\r
            Connection: close\r
            \r
            Service Unavailable\n
            """)
    }
}

@Suite("HTTPOutboundBuffer")
struct HTTPOutboundBufferTests {
    @Test func partialWritesAcrossChunksKeepOrder() {
        var buffer = HTTPOutboundBuffer()
        buffer.append(bytes("head1"))
        buffer.append([UInt8](repeating: 0x62, count: HTTPOutboundBuffer.coalescingLimit + 1))
        buffer.append(bytes("head2"))
        #expect(buffer.chunkCount == 3)
        buffer.consume(3)
        let lengths = buffer.withReadableChunks(maxChunks: 2) { $0.map(\.count) }
        #expect(lengths == [2, HTTPOutboundBuffer.coalescingLimit + 1])
        buffer.consume(2 + HTTPOutboundBuffer.coalescingLimit)
        #expect(text(buffer.readableBytes) == "bhead2")
        buffer.consume(6)
        #expect(buffer.isEmpty)
        #expect(buffer.chunkCount == 0)
    }
}

@Suite("HTTPDate")
struct HTTPDateTests {
    @Test(arguments: [
        (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
    ])
    func imfFixdate(seconds: Int64, expected: String) {
        #expect(text(HTTPDate.imfFixdate(unixSeconds: seconds)) == expected)
    }

    @Test func parsesEveryFormARecipientMustAccept() {
        func parse(_ text: String) -> Int64? { Array(text.utf8).withUnsafeBufferPointer { HTTPDate.unixSeconds($0) } }
        // RFC 9110 §5.6.7's three examples, and round trips of what the encoder writes.
        #expect(parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(parse("Sun Nov  6 08:49:37 1994") == 784_111_777)
        for seconds: Int64 in [0, 951_782_400, 4_102_444_799, 1_795_000_000, -1] {
            #expect(parse(text(HTTPDate.imfFixdate(unixSeconds: seconds))) == seconds)
        }
        for invalid in ["", "Sun, 06 Nov 1994 08:49:37 GMT ", "sun, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
                        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
                        "Sun, 29 Feb 1900 00:00:00 GMT", "Sun Nov 6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT",
                        "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994 08:4a:37 GMT"] {
            #expect(parse(invalid) == nil, "\(invalid)")
        }
        let repeated = HTTPRequestHead(method: .get, target: "/", headers: [("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"), ("if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT")])
        #expect(repeated.dateHeader("If-Modified-Since") == nil)
        #expect(HTTPRequestHead(method: .get, target: "/", headers: [("IF-MODIFIED-SINCE", "Sun, 06 Nov 1994 08:49:37 GMT")]).dateHeader("If-Modified-Since") == 784_111_777)
    }

    @Test func cacheFollowsTheSecond() {
        var cache = HTTPDateCache()
        #expect(text(cache.bytes(unixSeconds: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(text(cache.bytes(unixSeconds: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(text(cache.bytes(unixSeconds: 61)) == "Thu, 01 Jan 1970 00:01:01 GMT")
    }
}
