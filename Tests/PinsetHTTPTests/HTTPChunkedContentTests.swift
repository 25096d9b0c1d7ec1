import PinsetHTTP
import Testing

/// Chunked request content (RFC 9112 §7.1) on a listener that accepts content, as TrustKit-Android uploads its
/// reports, and `Expect: 100-continue` (RFC 9110 §10.1.1).
@Suite struct HTTPChunkedContentTests {
    private let accepting = HTTPLimits(maxContentBytes: 16)

    @Test func chunkedContentIsDecodedAndReturnedWithItsHead() {
        let input = "POST /report/acme HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA;name=\"v a\" ; x\r\n, world!!!\r\n0\r\nX-Trailer: t\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"
        let results = parseAll(input, limits: accepting)
        guard results.count == 3, case .head(let first) = results[0], case .head(let second) = results[1] else {
            Issue.record("expected two heads, got \(results)")
            return
        }
        #expect(first.body == bytes("hello, world!!!"))
        #expect(first.header("Transfer-Encoding") == "chunked")
        #expect(second.method == .get)
        #expect(HTTPFuzzRegressionTests.parse([bytes(input)[...]], limits: accepting)
            == HTTPFuzzRegressionTests.parse(bytes(input).indices.map { bytes(input)[$0...$0] }, limits: accepting))
    }

    @Test(arguments: [
        // Framing that is ambiguous or not chunked last (RFC 9112 §6.1, §6.3).
        ("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", HTTPRequestError.Code.invalidContentLength, 400),
        ("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .invalidContentLength, 400),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .invalidContentLength, 400),
        ("Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", .invalidContentLength, 400),
        ("Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", .unsupportedTransferCoding, 501),
        ("Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", .invalidContentLength, 400),
        // Chunk syntax.
        ("Transfer-Encoding: chunked\r\n\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n-1\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n5;\r\nhello\r\n0\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n5;a=\"x\r\nhello\r\n0\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", .invalidLineTerminator, 400),
        ("Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n", .malformedChunk, 400),
        ("Transfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n", .malformedHeader, 400),
        // Sizes: decoded, digits (no overflow), and framing on the wire.
        ("Transfer-Encoding: chunked\r\n\r\n11\r\n", .contentTooLarge, 413),
        ("Transfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n9\r\n", .contentTooLarge, 413),
        ("Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF\r\n", .contentTooLarge, 413),
        ("Transfer-Encoding: chunked\r\n\r\n" + String(repeating: "0", count: 300) + "\r\n", .malformedChunk, 400),
    ])
    func malformedOrOversizedChunkedContentIsRefused(fields: String, code: HTTPRequestError.Code, status: Int) {
        let input = "POST /r HTTP/1.1\r\nHost: h\r\n" + fields
        #expect(failureCode(input, limits: accepting) == code)
        #expect(HTTPRequestError(code, "").status.code == status)
    }

    @Test func chunkedInHTTP10IsRefused() {
        #expect(failureCode("POST /r HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", limits: accepting) == .invalidContentLength)
    }

    @Test func manyEmptyExtensionsOrTinyChunksCannotGrowTheBufferPastTheWireLimit() {
        // Each chunk carries one byte with a long extension, so framing dwarfs the content.
        var input = "POST /r HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<16 { input += "1;" + String(repeating: "e", count: 200) + "\r\nx\r\n" }
        let smallWire = HTTPLimits(maxHeaderBytes: 256, maxContentBytes: 16)
        #expect(smallWire.maxChunkedWireBytes < 16 * 207)
        #expect(failureCode(input, limits: smallWire) == .contentTooLarge)
        // Trailers are bounded like a header section.
        let trailers = String(repeating: "T: \(String(repeating: "v", count: 150))\r\n", count: 60)
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + trailers, limits: accepting) == .headerSectionTooLarge)
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + String(repeating: "T: v\r\n", count: 65), limits: accepting) == .tooManyHeaders)
    }

    @Test func theBundleListenerKeepsRefusingChunkedContent() {
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == .contentNotAllowed)
        #expect(failureCode("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == .contentNotAllowed)
    }

    @Test func anEndlessChunkStreamTimesOutAtTheHeadDeadline() {
        var harness = ConnectionHarness(configuration: .init(limits: HTTPLimits(maxContentBytes: 1 << 20), requestHeadTimeout: .seconds(10)))
        harness.feed("POST /r HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        for second in 1...9 {
            harness.time = fixedTime(.seconds(second))
            harness.feed("1\r\nx\r\n")
            #expect(harness.machine.checkTimeouts(now: harness.time) == .none)
        }
        #expect(harness.requests.isEmpty)
        guard case .rejected(let error, _) = harness.machine.checkTimeouts(now: fixedTime(.seconds(10))) else {
            Issue.record("a chunk stream that never ends must time out with the head")
            return
        }
        #expect(error.code == .requestTimeout)
        #expect(error.method == .post && error.target == "/r")
    }

    @Test func expectContinueIsAnsweredBeforeTheContentIsRead() {
        var harness = ConnectionHarness(configuration: .init(limits: accepting))
        let head = harness.feed("POST /r HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        #expect(head.output == "HTTP/1.1 100 Continue\r\n\r\n")
        #expect(head.last.isReadMore)
        let final = harness.feed("hello")
        #expect(final.output.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(harness.requests.first?.body == bytes("hello"))

        var chunked = ConnectionHarness(configuration: .init(limits: accepting))
        #expect(chunked.feed("POST /r HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n").output == "HTTP/1.1 100 Continue\r\n\r\n")
        #expect(chunked.feed("5\r\nhello\r\n0\r\n\r\n").output.hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    @Test func expectContinueIsNotAnsweredForTooLargeContentHTTP10OrContentAlreadySent() {
        var tooLarge = ConnectionHarness(configuration: .init(limits: accepting))
        let refused = tooLarge.feed("POST /r HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 17\r\n\r\n").output
        #expect(refused.hasPrefix("HTTP/1.1 413 Content Too Large\r\n"))
        #expect(!refused.contains("100 Continue"))

        var http10 = ConnectionHarness(configuration: .init(limits: accepting))
        #expect(http10.feed("POST /r HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n").output.isEmpty)

        var sent = ConnectionHarness(configuration: .init(limits: accepting))
        #expect(sent.feed("POST /r HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello").output.hasPrefix("HTTP/1.1 200 OK\r\n"))
    }
}
