import PinsetHTTP
import Testing

@Suite("HTTPConnectionStateMachine")
struct HTTPConnectionStateMachineTests {
    private static let ok200 = "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"

    @Test func keepAliveAnswersTwoRequestsOnOneConnection() {
        var harness = ConnectionHarness()
        let first = harness.feed("GET /a HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(first.output == Self.ok200)
        #expect(first.last.isReadMore)
        let second = harness.feed("GET /b HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(second.output == Self.ok200)
        #expect(!harness.machine.isClosing)
        #expect(harness.requests.map(\.target) == ["/a", "/b"])
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() {
        var harness = ConnectionHarness { request in HTTPResponse(body: bytes(request.target)) }
        let result = harness.feed("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /22 HTTP/1.1\r\nHost: h\r\n\r\nGET /333 HTTP/1.1\r\nHost: h\r\n\r\n")
        let date = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
        #expect(result.output == "HTTP/1.1 200 OK\r\n\(date)Content-Length: 2\r\n\r\n/1"
            + "HTTP/1.1 200 OK\r\n\(date)Content-Length: 3\r\n\r\n"
            + "HTTP/1.1 200 OK\r\n\(date)Content-Length: 4\r\n\r\n/333")
        #expect(result.last.isReadMore)
    }

    @Test func http10ClosesUnlessKeepAliveWasAsked() {
        var plain = ConnectionHarness()
        let closed = plain.feed("GET / HTTP/1.0\r\n\r\nGET /ignored HTTP/1.0\r\n\r\n")
        #expect(closed.output.contains("\r\nConnection: close\r\n"))
        #expect(closed.last.isClose)
        #expect(plain.requests.count == 1)

        var kept = ConnectionHarness()
        let open = kept.feed("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(open.output.contains("\r\nConnection: keep-alive\r\n"))
        #expect(open.last.isReadMore)
    }

    @Test func closingAtTheClientsRequestIsToldApartFromClosesThatMayStillMeetInput() {
        var asked = ConnectionHarness()
        _ = asked.feed("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(asked.machine.isClosingAtClientRequest)

        var moreAfterTheLastRequest = ConnectionHarness()
        _ = moreAfterTheLastRequest.feed("GET / HTTP/1.0\r\n\r\nGET /more HTTP/1.0\r\n\r\n")
        #expect(moreAfterTheLastRequest.machine.isClosing)
        #expect(!moreAfterTheLastRequest.machine.isClosingAtClientRequest)

        var refused = ConnectionHarness()
        _ = refused.feed("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nConnection: close\r\n\r\n")
        #expect(refused.machine.isClosing)
        #expect(!refused.machine.isClosingAtClientRequest, "the client may still be sending the refused body")

        var draining = ConnectionHarness()
        _ = draining.feed("GET / HTTP/1.1\r\nHost: h\r\n")
        draining.machine.beginDraining()
        _ = draining.feed("\r\n")
        #expect(draining.machine.isClosing)
        #expect(!draining.machine.isClosingAtClientRequest)

        var kept = ConnectionHarness()
        _ = kept.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(!kept.machine.isClosingAtClientRequest)
    }

    @Test func exactBytesOfA405() {
        var harness = ConnectionHarness()
        let result = harness.feed("POST /bundles HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        #expect(result.output == """
            HTTP/1.1 405 Method Not Allowed\r
            Date: Sun, 06 Nov 1994 08:49:37 GMT\r
            Content-Type: text/plain; charset=utf-8\r
            Allow: GET, HEAD\r
            Content-Length: 19\r
            Connection: close\r
            \r
            Method Not Allowed\n
            """)
        #expect(result.last.isClose)
        #expect(harness.requests.isEmpty)
        #expect(harness.rejections.map(\.code) == [.methodNotAllowed])
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505),
        ("\u{1}\u{2}garbage\r\n\r\n", 400),
        ("GET /\(String(repeating: "a", count: 3000)) HTTP/1.1\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: h\r\n" + String(repeating: "X-A: b\r\n", count: 65) + "\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(String(repeating: "b", count: 9000))", 431),
    ])
    func protocolErrorsAnswerOnceAndClose(request: String, status: Int) {
        var harness = ConnectionHarness()
        let result = harness.feed(request)
        #expect(result.output.hasPrefix("HTTP/1.1 \(status) "))
        #expect(result.output.contains("\r\nConnection: close\r\n"))
        #expect(result.last.isClose)
        #expect(harness.requests.isEmpty)
        harness.machine.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), now: harness.time)
        #expect(harness.run().output.isEmpty, "nothing after an error may be answered")
    }

    @Test func errorAfterAValidPipelinedRequestComesAfterItsResponse() {
        var harness = ConnectionHarness()
        let result = harness.feed("GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nZ")
        #expect(result.output.hasPrefix(Self.ok200 + "HTTP/1.1 400 Bad Request\r\n"))
        #expect(result.last.isClose)
    }

    @Test func errorForHeadOmitsTheBody() {
        var harness = ConnectionHarness()
        let result = harness.feed("HEAD / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n")
        #expect(result.output.hasSuffix("Content-Length: 12\r\nConnection: close\r\n\r\n"))
    }

    @Test func slowlorisHeadIsCutAtTheHeadDeadlineEvenWhileBytesTrickle() {
        var harness = ConnectionHarness(configuration: .init(requestHeadTimeout: .seconds(10), idleTimeout: .seconds(60)))
        let start = harness.time
        for (second, byte) in "GET / HTTP/1.1\r\n".utf8.prefix(10).enumerated() {
            harness.time = start.advanced(by: .seconds(second))
            harness.machine.receive([byte], now: harness.time)
            #expect(harness.run().last.isReadMore)
            #expect(harness.machine.checkTimeouts(now: harness.time) == .none)
        }
        harness.time = start.advanced(by: .seconds(10))
        let action = harness.machine.checkTimeouts(now: harness.time)
        #expect(action == .rejected(HTTPRequestError(.requestTimeout, ""), .init(status: .requestTimeout, bodyBytes: 16)))
        let result = harness.run()
        #expect(result.output.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(result.output.contains("\r\nConnection: close\r\n"))
        #expect(result.last.isClose)
    }

    @Test func silentConnectionIsClosedAtTheHeadDeadlineCountedFromItsStart() {
        var harness = ConnectionHarness(configuration: .init(requestHeadTimeout: .seconds(10), idleTimeout: .seconds(60)))
        let start = harness.time
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(9))) == .none)
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(10))) == .close)
        #expect(harness.machine.output.isEmpty)
        #expect(harness.machine.isClosing)
    }

    @Test func firstHeadDeadlineCountsFromTheStartNotFromTheFirstByte() {
        var harness = ConnectionHarness(configuration: .init(requestHeadTimeout: .seconds(10), idleTimeout: .seconds(60)))
        let start = harness.time
        harness.time = start.advanced(by: .seconds(8))
        harness.feed("GET / HTTP/1.1\r\n")
        let action = harness.machine.checkTimeouts(now: start.advanced(by: .seconds(10)))
        #expect(action == .rejected(HTTPRequestError(.requestTimeout, ""), .init(status: .requestTimeout, bodyBytes: 16)))
    }

    @Test func headDeadlineRestartsForEachRequest() {
        var harness = ConnectionHarness(configuration: .init(requestHeadTimeout: .seconds(10), idleTimeout: .seconds(60)))
        let start = harness.time
        harness.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        harness.time = start.advanced(by: .seconds(30))
        harness.feed("GET / HTTP/1.1\r\n")
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(39))) == .none)
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(40))) != .none)
    }

    @Test func idleKeepAliveConnectionClosesSilently() {
        var harness = ConnectionHarness(configuration: .init(requestHeadTimeout: .seconds(10), idleTimeout: .seconds(60)))
        let start = harness.time
        harness.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(harness.machine.isIdle)
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(59))) == .none)
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(60))) == .close)
        #expect(harness.machine.output.isEmpty)
        #expect(harness.machine.isClosing)
    }

    @Test func peerThatStopsReadingIsClosedAfterTheIdleTimeout() {
        var harness = ConnectionHarness(configuration: .init(idleTimeout: .seconds(60)))
        let start = harness.time
        harness.machine.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), now: start)
        _ = harness.machine.nextAction(now: start)
        harness.machine.respond(HTTPResponse(body: bytes("x")), to: HTTPRequestHead(method: .get, target: "/"), now: start)
        #expect(!harness.machine.output.isEmpty)
        #expect(harness.machine.checkTimeouts(now: start.advanced(by: .seconds(60))) == .close)
    }

    @Test func pipelinedOutputStopsAtTheHighWaterMark() {
        // Each response is 227 bytes: one fits under the 300-byte mark, two do not.
        var harness = ConnectionHarness(configuration: .init(outputHighWaterMark: 300)) { _ in
            HTTPResponse(body: [UInt8](repeating: 0x61, count: 150))
        }
        harness.machine.receive(bytes(String(repeating: "GET / HTTP/1.1\r\nHost: h\r\n\r\n", count: 3)), now: harness.time)
        guard case .handle(let first) = harness.machine.nextAction(now: harness.time) else { Issue.record("expected a request"); return }
        harness.machine.respond(harness.handler(first), to: first, now: harness.time)
        guard case .handle(let second) = harness.machine.nextAction(now: harness.time) else { Issue.record("expected a request"); return }
        harness.machine.respond(harness.handler(second), to: second, now: harness.time)
        #expect(harness.machine.nextAction(now: harness.time).isWaitForOutput)
        _ = harness.takeOutput()
        guard case .handle = harness.machine.nextAction(now: harness.time) else { Issue.record("expected the third request"); return }
    }

    @Test func drainingClosesAnIdleConnectionAndFinishesAPartialRequestWithClose() {
        var idle = ConnectionHarness()
        idle.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        idle.machine.beginDraining()
        #expect(idle.machine.isClosing)
        #expect(idle.machine.nextAction(now: idle.time).isClose)

        var busy = ConnectionHarness()
        busy.feed("GET / HTTP/1.1\r\nHo")
        busy.machine.beginDraining()
        #expect(!busy.machine.isClosing)
        let result = busy.feed("st: h\r\n\r\n")
        #expect(result.output.contains("\r\nConnection: close\r\n"))
        #expect(result.last.isClose)
    }

    @Test func endOfInputAnswersBufferedRequestsThenCloses() {
        var harness = ConnectionHarness()
        harness.machine.receive(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /partial"), now: harness.time)
        harness.machine.peerClosedInput()
        let result = harness.run()
        #expect(result.output == Self.ok200)
        #expect(result.last.isClose)
    }
}
