import PinsetHTTP
import Testing

@Suite("HTTPRequestParser")
struct HTTPRequestParserTests {
    @Test func simpleGet() throws {
        let head = try #require(onlyHead("GET /v1/bundles/acme?since=3 HTTP/1.1\r\nHost: pins.example\r\nUser-Agent: test/1\r\n\r\n"))
        #expect(head.method == .get)
        #expect(head.target == "/v1/bundles/acme?since=3")
        #expect(head.path == "/v1/bundles/acme")
        #expect(head.query == "since=3")
        #expect(head.version == .http1_1)
        #expect(head.keepAlive)
        #expect(head.header("host") == "pins.example")
        #expect(head.header("USER-AGENT") == "test/1")
        #expect(head.header("Accept") == nil)
        #expect(head.headers.map(\.name) == ["Host", "User-Agent"])
    }

    @Test func head() throws {
        let head = try #require(onlyHead("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(head.method == .head)
        #expect(head.query == nil)
    }

    @Test func fieldValuesAreTrimmedOfOptionalWhitespace() throws {
        let head = try #require(onlyHead("GET / HTTP/1.1\r\nHost:a\r\nX-Tag: \t one two \t\r\nX-Tag: three\r\n\r\n"))
        #expect(head.header("x-tag") == "one two")
        #expect(head.headers(named: "X-Tag") == ["one two", "three"])
        #expect(head.header("Host") == "a")
    }

    @Test func pipelinedRequestsInOneBufferComeOutInOrder() {
        let results = parseAll("GET /a HTTP/1.1\r\nHost: h\r\n\r\nHEAD /b HTTP/1.1\r\nHost: h\r\n\r\nGET /c HTTP/1.1\r\nHo")
        let targets: [String] = results.compactMap { if case .head(let head) = $0 { head.target } else { nil } }
        #expect(targets == ["/a", "/b"])
        guard case .incomplete = results.last else { Issue.record("expected the third request to be incomplete"); return }
    }

    @Test func requestFedOneByteAtATime() throws {
        var parser = HTTPRequestParser()
        let request = bytes("GET /one/byte HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n")
        for (index, byte) in request.enumerated() {
            parser.append([byte])
            let result = parser.next()
            if index < request.count - 1 {
                guard case .incomplete = result else { Issue.record("result before the last byte at \(index)"); return }
            } else {
                guard case .head(let head) = result else { Issue.record("no head after the last byte"); return }
                #expect(head.target == "/one/byte")
                #expect(head.header("accept") == "*/*")
            }
        }
        #expect(!parser.hasBufferedBytes)
    }

    @Test func binaryGarbageIsRefusedBeforeAnyLineEnds() {
        var parser = HTTPRequestParser()
        parser.append([0x47, 0x45])
        guard case .incomplete = parser.next() else { Issue.record("a method prefix must wait"); return }
        parser.append([0x01] + [UInt8](repeating: 0xFF, count: 100))
        guard case .failure(let error) = parser.next() else { Issue.record("expected a failure"); return }
        #expect(error.code == .malformedRequestLine)
        #expect(error.status == .badRequest)
    }

    @Test func emptyLinesAndRequestsFedByteByByteAreStillChecked() throws {
        var parser = HTTPRequestParser()
        for byte in bytes("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n") {
            parser.append([byte])
            if case .failure(let error) = parser.next() { Issue.record("unexpected \(error)") }
        }
        for byte in bytes("\r\nG\u{7}") {
            parser.append([byte])
            _ = parser.next()
        }
        guard case .failure(let error) = parser.next() else { Issue.record("the second request's method is invalid"); return }
        #expect(error.code == .malformedRequestLine)
    }

    @Test func leadingEmptyLinesAreIgnored() throws {
        let head = try #require(onlyHead("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(head.target == "/")
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: upgrade , Keep-Alive\r\n\r\n", true),
    ])
    func keepAliveFollowsVersionAndConnection(request: String, keepAlive: Bool) throws {
        #expect(try #require(onlyHead(request)).keepAlive == keepAlive)
    }

    @Test func http10DoesNotNeedHost() throws {
        #expect(try #require(onlyHead("GET / HTTP/1.0\r\n\r\n")).version == .http1_0)
    }

    @Test(arguments: [
        ("GET http://host/acme.json.signed HTTP/1.1\r\nHost: host\r\n\r\n", "/acme.json.signed"),
        ("GET HTTPS://Pins.Example.COM:8443/acme.json.signed?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", "/acme.json.signed?x=1"),
        ("GET http://127.0.0.1:8080/healthz HTTP/1.1\r\nHost: elsewhere\r\n\r\n", "/healthz"),
        ("GET http://[::1]:8080/readyz HTTP/1.1\r\nHost: h\r\n\r\n", "/readyz"),
        ("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n", "/"),
        ("GET http://h:?q HTTP/1.0\r\n\r\n", "/?q"),
        ("HEAD http://xn--bcher-kva.example/a%2Fb HTTP/1.1\r\nHost: h\r\n\r\n", "/a%2Fb"),
    ])
    func absoluteFormTargetsAreServedByTheirPath(request: String, target: String) throws {
        let head = try #require(onlyHead(request))
        #expect(head.target == target)
    }

    /// RFC 3986 §6.2.2.2, as nginx normalises before matching a location: unreserved characters are decoded in
    /// the path; reserved ones, and anything in the query, stay as sent.
    @Test(arguments: [
        ("/acme%2Ejson.signed", "/acme.json.signed"),
        ("/%61%63%6d%65%2E%6A%73%6F%6E%2e%73%69%67%6E%65%64", "/acme.json.signed"),
        ("/%41%5A%30%39%2D%5F%7E", "/AZ09-_~"),
        ("/a%2Fb%3Fc%25d%2e", "/a%2Fb%3Fc%25d."),
        ("/a%20b", "/a%20b"),
        ("/x?y=%41", "/x?y=%41"),
        ("http://h/acme%2Ejson.signed", "/acme.json.signed"),
        ("/plain", "/plain"),
    ])
    func percentEncodedUnreservedCharactersAreDecodedInThePath(target: String, normalised: String) throws {
        let head = try #require(onlyHead("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(head.target == normalised)
    }

    @Test func contentLengthZeroIsAccepted() throws {
        #expect(onlyHead("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n") != nil)
        #expect(onlyHead("GET / HTTP/1.1\r\nHost: h\r\ncontent-length: 000\r\n\r\n") != nil)
    }

    @Test(arguments: [
        ("POST / HTTP/1.1\r\nHost: h\r\n\r\n", HTTPRequestError.Code.methodNotAllowed),
        ("get / HTTP/1.1\r\nHost: h\r\n\r\n", .methodNotAllowed),
        ("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", .contentNotAllowed),
        ("GET / HTTP/1.0\r\ntransfer-encoding: identity\r\n\r\n", .contentNotAllowed),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", .contentNotAllowed),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0, 0\r\n\r\n", .contentNotAllowed),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", .contentNotAllowed),
        ("GET / HTTP/1.1\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", .invalidHost),
        ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", .invalidHost),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/1.2\r\nHost: h\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/0.9\r\n\r\n", .unsupportedVersion),
        ("GET / http/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("GET /\r\n\r\n", .malformedRequestLine),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\r\n\r\n", .malformedRequestLine),
        ("garbage\r\n\r\n", .malformedRequestLine),
        ("GET ftp://h/acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http:///acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://user@h/acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://h:80a/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://h:123456/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://[::1/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://[::g]/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://h%zz/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http://h/a#frag HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET http:/h/ HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET h:80 HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET * HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /caf\u{E9} HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /a%2 HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /a#frag HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET / HTTP/1.1\nHost: h\n\n", .invalidLineTerminator),
        ("GET / HTTP/1.1\r\nHost: h\n\r\n", .invalidLineTerminator),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r2\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n folded\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost : h\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\nX(A): 1\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\n: empty\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{7F}b\r\n\r\n", .malformedHeader),
    ])
    func hostileOrUnsupportedRequestsAreRefused(request: String, code: HTTPRequestError.Code) {
        #expect(failureCode(request) == code)
    }

    @Test func refusalStatusesMatchTheCodes() {
        #expect(HTTPRequestError(.methodNotAllowed, "").status == .methodNotAllowed)
        #expect(HTTPRequestError(.contentNotAllowed, "").status == .badRequest)
        #expect(HTTPRequestError(.unsupportedVersion, "").status == .httpVersionNotSupported)
        #expect(HTTPRequestError(.requestLineTooLong, "").status == .uriTooLong)
        #expect(HTTPRequestError(.tooManyHeaders, "").status == .requestHeaderFieldsTooLarge)
        #expect(HTTPRequestError(.headerSectionTooLarge, "").status == .requestHeaderFieldsTooLarge)
        #expect(HTTPRequestError(.requestTimeout, "").status == .requestTimeout)
    }

    @Test func failureKeepsMethodAndTargetForLogs() {
        guard case .failure(let error) = parseAll("POST /upload HTTP/1.1\r\nHost: h\r\n\r\n").last else {
            Issue.record("expected a failure"); return
        }
        #expect(error.method == .other("POST"))
        #expect(error.target == "/upload")
    }

    @Test func tooManyHeaders() {
        let limits = HTTPLimits(maxHeaderCount: 3)
        let fields = (1...3).map { "X-\($0): v\r\n" }.joined()
        #expect(onlyHead("GET / HTTP/1.0\r\n\(fields)\r\n", limits: limits) != nil)
        #expect(failureCode("GET / HTTP/1.0\r\n\(fields)X-4: v\r\n\r\n", limits: limits) == .tooManyHeaders)
    }

    @Test func headerSectionTooLargeIsRefusedBeforeItEnds() {
        let limits = HTTPLimits(maxHeaderBytes: 64)
        // 9 + 38 + 2 (final CRLF) = 49 bytes fit; a 79-byte field line does not, even before the head ends.
        #expect(onlyHead("GET / HTTP/1.1\r\nHost: h\r\nX-Pad: \(String(repeating: "a", count: 29))\r\n\r\n", limits: limits) != nil)
        #expect(failureCode("GET / HTTP/1.1\r\nHost: h\r\nX-Pad: \(String(repeating: "a", count: 70))", limits: limits) == .headerSectionTooLarge)
        #expect(failureCode("GET / HTTP/1.1\r\nHost: h\r\nX-Pad: \(String(repeating: "a", count: 70))\r\n\r\n", limits: limits) == .headerSectionTooLarge)
    }

    @Test func requestLineLimitIsExact() {
        let limits = HTTPLimits(maxRequestLineBytes: 32)
        let fitting = "GET /" + String(repeating: "a", count: 32 - 14) + " HTTP/1.0" // 32 bytes
        #expect(fitting.utf8.count == 32)
        #expect(onlyHead(fitting + "\r\n\r\n", limits: limits) != nil)
        #expect(failureCode("GET /a" + String(repeating: "a", count: 32 - 14) + " HTTP/1.0\r\n\r\n", limits: limits) == .requestLineTooLong)
    }

    @Test func endlessRequestLineIsRefusedWithoutWaitingForItsEnd() {
        var parser = HTTPRequestParser(limits: HTTPLimits(maxRequestLineBytes: 100))
        parser.append(bytes("GET /" + String(repeating: "a", count: 96)))
        guard case .incomplete = parser.next() else { Issue.record("101 bytes may still be a 100-byte line and CR"); return }
        parser.append(bytes("aa"))
        guard case .failure(let error) = parser.next() else { Issue.record("expected 414"); return }
        #expect(error.code == .requestLineTooLong)
        #expect(error.status.code == 414)
        guard case .failure = parser.next() else { Issue.record("a failed parser must stay failed"); return }
    }

    @Test func madeHeadsFollowTheSameKeepAliveRules() {
        #expect(!HTTPRequestHead(method: .get, target: "/", headers: [("Connection", "close")]).keepAlive)
        #expect(!HTTPRequestHead(method: .get, target: "/", version: .http1_0).keepAlive)
        let head = HTTPRequestHead(method: .get, target: "/x?y", headers: [("If-None-Match", "\"abc\"")])
        #expect(head.keepAlive)
        #expect(head.header("if-none-match") == "\"abc\"")
        #expect(head.path == "/x")
    }
}
