import PinsetHTTP
import Testing

/// Content framed by `Content-Length`, on a listener that accepts it (`HTTPLimits.maxContentBytes` > 0), and the
/// default listener that must keep refusing it.
@Suite struct HTTPRequestContentTests {
    private let accepting = HTTPLimits(maxContentBytes: 16)

    @Test func postContentIsReturnedWithItsHead() {
        let head = onlyHead("POST /report/acme HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", limits: accepting)
        #expect(head?.method == .post)
        #expect(head?.body == bytes("hello"))
        #expect(head?.target == "/report/acme")
    }

    @Test func contentThatArrivesInPiecesCompletesTheRequestOnlyAtItsLastByte() {
        var parser = HTTPRequestParser(limits: accepting)
        parser.append(bytes("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nab"))
        guard case .incomplete = parser.next() else {
            Issue.record("a request whose content is partial must not be returned")
            return
        }
        #expect(parser.hasBufferedBytes)
        parser.append(bytes("cdGET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        guard case .head(let first) = parser.next(), case .head(let second) = parser.next() else {
            Issue.record("both requests must be returned")
            return
        }
        #expect(first.body == bytes("abcd"))
        #expect(second.method == .get)
        #expect(second.body.isEmpty)
        #expect(!parser.hasBufferedBytes)
    }

    @Test func contentLongerThanTheLimitIsRefusedWith413BeforeAnyOfItArrives() {
        let results = parseAll("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 17\r\n\r\n", limits: accepting)
        guard case .failure(let error) = results.last else {
            Issue.record("expected a failure, got \(results)")
            return
        }
        #expect(error.code == .contentTooLarge)
        #expect(error.status.code == 413)
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999999\r\n\r\n", limits: accepting) == .contentTooLarge)
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 0000000000000000000000016\r\n\r\n", limits: accepting) == nil)
    }

    @Test(arguments: [
        ("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", HTTPRequestError.Code.invalidContentLength, 400),
        ("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 1\r\n\r\nx", .invalidContentLength, 400),
        ("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\nx", .invalidContentLength, 400),
        ("PUT /r HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx", .methodNotAllowed, 405),
    ])
    func ambiguousOrUnsupportedFramingIsRefused(input: String, code: HTTPRequestError.Code, status: Int) {
        #expect(failureCode(input, limits: accepting) == code)
        #expect(HTTPRequestError(code, "").status.code == status)
    }

    @Test func theDefaultListenerStillRefusesContentAndPost() {
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello") == .contentNotAllowed)
        #expect(failureCode("POST /r HTTP/1.1\r\nHost: h\r\n\r\n") == .methodNotAllowed)
        #expect(failureCode("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n") == .contentNotAllowed)
    }

    @Test func aRefusedMethodOnAContentListenerNamesPostInAllow() {
        var harness = ConnectionHarness(configuration: .init(limits: accepting))
        let result = harness.feed("PUT /r HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(result.output.contains("405 Method Not Allowed"))
        #expect(result.output.contains("Allow: GET, HEAD, POST\r\n"))
    }

    @Test func aRequestWhoseContentNeverCompletesTimesOutWith408() {
        var harness = ConnectionHarness(configuration: .init(limits: accepting, requestHeadTimeout: .seconds(10)))
        harness.feed("POST /r HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
        #expect(harness.requests.isEmpty)
        guard case .rejected(let error, _) = harness.machine.checkTimeouts(now: harness.time.advanced(by: .seconds(11))) else {
            Issue.record("a request whose content stops arriving must time out")
            return
        }
        #expect(error.code == .requestTimeout)
        #expect(error.method == .post && error.target == "/r", "the access log names the request the timeout ended")
    }
}
