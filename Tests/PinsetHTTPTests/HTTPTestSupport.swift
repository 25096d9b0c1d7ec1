import PinsetHTTP

/// `Sun, 06 Nov 1994 08:49:37 GMT`, the example date of RFC 9110 §5.6.7.
let rfcExampleSeconds: Int64 = 784_111_777

func fixedTime(_ offset: Duration = .zero, base: ContinuousClock.Instant = ContinuousClock.now) -> HTTPTime {
    HTTPTime(instant: base, unixSeconds: rfcExampleSeconds).advanced(by: offset)
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Parses everything in `input` and returns each result until the parser needs more bytes or fails.
func parseAll(_ input: String, limits: HTTPLimits = HTTPLimits()) -> [HTTPRequestParser.Result] {
    var parser = HTTPRequestParser(limits: limits)
    parser.append(bytes(input))
    var results: [HTTPRequestParser.Result] = []
    while true {
        let result = parser.next()
        results.append(result)
        switch result {
        case .head: continue
        case .failure, .incomplete: return results
        }
    }
}

func onlyHead(_ input: String, limits: HTTPLimits = HTTPLimits()) -> HTTPRequestHead? {
    guard case .head(let head) = parseAll(input, limits: limits).first else { return nil }
    return head
}

func failureCode(_ input: String, limits: HTTPLimits = HTTPLimits()) -> HTTPRequestError.Code? {
    for result in parseAll(input, limits: limits) {
        if case .failure(let error) = result { return error.code }
    }
    return nil
}

/// Drives a state machine like a transport would, answering every request with `handler`.
struct ConnectionHarness {
    var machine: HTTPConnectionStateMachine
    var time: HTTPTime
    var handler: (HTTPRequestHead) -> HTTPResponse
    var requests: [HTTPRequestHead] = []
    var rejections: [HTTPRequestError] = []

    init(
        configuration: HTTPConnectionStateMachine.Configuration = .init(),
        handler: @escaping (HTTPRequestHead) -> HTTPResponse = { _ in
            HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain")], body: Array("hello".utf8))
        }
    ) {
        time = fixedTime()
        machine = HTTPConnectionStateMachine(configuration: configuration, now: time)
        self.handler = handler
    }

    /// Feeds `input`, runs every resulting action and returns the last one together with the output written.
    @discardableResult
    mutating func feed(_ input: String) -> (output: String, last: HTTPConnectionStateMachine.Action) {
        machine.receive(bytes(input), now: time)
        return run()
    }

    mutating func run() -> (output: String, last: HTTPConnectionStateMachine.Action) {
        while true {
            let action = machine.nextAction(now: time)
            switch action {
            case .handle(let request):
                requests.append(request)
                machine.respond(handler(request), to: request, now: time)
            case .rejected(let error, _):
                rejections.append(error)
            case .readMore, .waitForOutput, .close:
                return (takeOutput(), action)
            }
        }
    }

    mutating func takeOutput() -> String {
        let written = machine.output.readableBytes
        machine.outputWritten(written.count, now: time)
        return text(written)
    }
}

extension HTTPConnectionStateMachine.Action {
    var isClose: Bool { if case .close = self { true } else { false } }
    var isReadMore: Bool { if case .readMore = self { true } else { false } }
    var isWaitForOutput: Bool { if case .waitForOutput = self { true } else { false } }
}
