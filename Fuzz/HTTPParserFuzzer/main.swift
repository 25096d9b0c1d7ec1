// libFuzzer entry point for the HTTP/1.1 protocol layer (PinsetHTTP), which sees every byte a client sends.
//
// Each input is one client's byte stream. It is checked in several ways:
// - `HTTPRequestParser` fed all at once, one byte at a time and in pseudo-random chunks must return the same
//   heads and fail or not fail alike: chunking is not observable;
// - after every `incomplete` the parser holds no more than one maximal request head (plus, where content is
//   accepted, the largest content), so a client cannot make it buffer without bound;
// - `HTTPConnectionStateMachine`, driven like a transport with pseudo-random chunks, clock steps, partial writes,
//   a peer that stops reading and graceful draining, never traps, always makes progress, keeps its queued output
//   under its high-water mark plus one response, closes after end of input, and writes a byte stream that parses
//   as well-formed HTTP/1.1 responses, one per request or refusal, in order.
//
// The chunking, the clock and the peer's behaviour come from a generator seeded by a hash of the input, so a
// crashing input reproduces exactly when run again.
import FuzzerDriver
import PinsetHTTP

/// The process entry point: SwiftPM links an executable target's `main` as `HTTPParserFuzzer_main`.
@_cdecl("HTTPParserFuzzer_main")
public func httpParserFuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, httpParserFuzzerTestOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func httpParserFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    HTTPFuzzCase(input).run()
    return 0
}

struct HTTPFuzzCase {
    let input: [UInt8]
    let seed: UInt64

    init(_ input: [UInt8]) {
        self.input = input
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in input { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        self.seed = hash
    }

    func run() {
        let tight = HTTPLimits(maxRequestLineBytes: 40, maxHeaderBytes: 96, maxHeaderCount: 3)
        // A reports-style listener: POST with `Content-Length` content.
        let content = HTTPLimits(maxRequestLineBytes: 40, maxHeaderBytes: 96, maxHeaderCount: 3, maxContentBytes: 64)
        for limits in [HTTPLimits(), tight, content] {
            checkChunkingInvariance(limits: limits)
        }
        let configurations = [
            HTTPConnectionStateMachine.Configuration(),
            HTTPConnectionStateMachine.Configuration(
                limits: tight, requestHeadTimeout: .seconds(2), idleTimeout: .seconds(5), outputHighWaterMark: 512
            ),
            HTTPConnectionStateMachine.Configuration(
                limits: content, requestHeadTimeout: .seconds(2), idleTimeout: .seconds(5), outputHighWaterMark: 512
            ),
        ]
        for (index, configuration) in configurations.enumerated() {
            var connection = ConnectionRun(input: input, configuration: configuration, seed: seed &+ UInt64(index))
            connection.run()
        }
    }

    /// Parses the input in three chunkings and requires the same outcome.
    func checkChunkingInvariance(limits: HTTPLimits) {
        let whole = parse(chunks: [input[...]], limits: limits)
        var single: [ArraySlice<UInt8>] = []
        single.reserveCapacity(input.count)
        for index in input.indices { single.append(input[index...index]) }
        let byteByByte = parse(chunks: single, limits: limits)
        var random = SplitMix64(seed: seed)
        var chunks: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset < input.count {
            let length = min(input.count - offset, random.chunkLength())
            chunks.append(input[offset..<(offset + length)])
            offset += length
        }
        let randomChunks = parse(chunks: chunks, limits: limits)
        guard whole == byteByByte, whole == randomChunks else {
            fatalError("parser outcome depends on chunking:\nwhole: \(whole)\nbyte by byte: \(byteByByte)\nrandom: \(randomChunks)")
        }
    }

    /// The heads returned, and whether parsing ended in a failure.
    struct ParseOutcome: Equatable, CustomStringConvertible {
        var heads: [String] = []
        var failed = false
        var description: String { "\(heads) failed=\(failed)" }
    }

    func parse(chunks: [ArraySlice<UInt8>], limits: HTTPLimits) -> ParseOutcome {
        var parser = HTTPRequestParser(limits: limits)
        var outcome = ParseOutcome()
        // A request line (with the empty lines before it) and a header section, each with its CRLF, and the
        // largest content the limits accept with its chunked framing.
        let maximalHead = limits.maxBufferedRequestBytes
        for chunk in chunks {
            chunk.withUnsafeBytes { parser.append($0) }
            var calls = 0
            parsing: while true {
                calls += 1
                if calls > chunk.count + 2 { fatalError("parser returned more heads than a chunk can hold") }
                switch parser.next() {
                case .head(let head):
                    outcome.heads.append(describe(head))
                case .failure:
                    outcome.failed = true
                    if case .head = parser.next() { fatalError("a failed parser returned a head") }
                    return outcome
                case .incomplete:
                    if parser.bufferedByteCount > maximalHead {
                        fatalError("parser buffers \(parser.bufferedByteCount) bytes of an incomplete head; limit \(maximalHead)")
                    }
                    break parsing
                }
            }
        }
        return outcome
    }
}

/// Everything observable about a head, including every accessor a handler may call.
func describe(_ head: HTTPRequestHead) -> String {
    let fields = head.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
    let host = head.header("host") ?? "-"
    let hosts = head.headers(named: "HOST").count
    return "\(head.method) \(head.target) \(head.version) keepAlive=\(head.keepAlive) path=\(head.path) "
        + "query=\(head.query ?? "-") host=\(host)/\(hosts) [\(fields)] body=\(head.body)"
}

/// One connection driven the way a transport drives it.
struct ConnectionRun {
    let input: [UInt8]
    let configuration: HTTPConnectionStateMachine.Configuration
    var random: SplitMix64
    var machine: HTTPConnectionStateMachine
    var now: HTTPTime
    /// Every byte written to the peer.
    var wire: [UInt8] = []
    /// For each response queued, in order: whether its body is omitted (a HEAD request).
    var expectations: [Bool] = []
    var peerReads = true
    /// `nextAction` said `waitForOutput` and the peer is not reading: the transport stops reading too.
    var blocked = false
    var closed = false
    /// Closed by a timeout that drops unwritten output.
    var abrupt = false

    /// The largest response the handler below produces, with room for its head.
    static let largestResponse = 24 * 1024
    static let largeBody = [UInt8](repeating: UInt8(ascii: "x"), count: 20_000)

    init(input: [UInt8], configuration: HTTPConnectionStateMachine.Configuration, seed: UInt64) {
        self.input = input
        self.configuration = configuration
        self.random = SplitMix64(seed: seed)
        self.now = HTTPTime(instant: ContinuousClock.now, unixSeconds: 1_700_000_000)
        self.machine = HTTPConnectionStateMachine(configuration: configuration, now: now)
    }

    mutating func run() {
        var offset = 0
        var steps = 0
        let maxSteps = 4 * input.count + 64
        var drained = false
        while offset < input.count && !closed && steps < maxSteps {
            steps += 1
            switch random.next() % 16 {
            case 0:
                advanceClock()
            case 1:
                peerReads.toggle()
                if peerReads && blocked { drive() }
            case 2:
                writePartially()
            case 3 where !drained && random.next() % 8 == 0:
                drained = true
                machine.beginDraining()
                drive()
            default:
                guard !blocked else {
                    writePartially()
                    continue
                }
                let length = min(input.count - offset, random.chunkLength())
                input[offset..<(offset + length)].withUnsafeBytes { machine.receive($0, now: now) }
                offset += length
                drive()
            }
            checkBounds()
        }
        if !closed {
            machine.peerClosedInput()
            peerReads = true
            drive()
            checkBounds()
            guard closed else { fatalError("the connection stays open after end of input") }
        }
        validateWire()
    }

    /// The handler: a response chosen by the target, covering large bodies, bodiless statuses, echoed client
    /// bytes and a handler that produces an invalid field.
    func respond(to request: HTTPRequestHead) -> HTTPResponse {
        var hash: UInt32 = 2_166_136_261
        for byte in request.target.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        switch hash % 6 {
        case 0:
            return HTTPResponse(status: .ok, headers: [("Content-Type", "application/octet-stream")], body: Self.largeBody)
        case 1:
            return HTTPResponse(status: .notModified, headers: [("ETag", "\"v1\"")], body: Array("representation".utf8))
        case 2:
            return HTTPResponse(status: .noContent, headers: [("Content-Length", "99")])
        case 3:
            let echoed = request.header("user-agent") ?? request.headers.first?.value ?? ""
            return HTTPResponse(status: .notFound, headers: [("X-Echo", echoed), ("Connection", "keep-alive")], body: Array("not found\n".utf8))
        case 4:
            return HTTPResponse(status: .ok, headers: [("X-Bad", "a\r\nInjected: yes")], body: Array("split".utf8))
        default:
            return HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain")], body: Array(request.target.utf8))
        }
    }

    mutating func drive() {
        for _ in 0..<10_000 {
            switch machine.nextAction(now: now) {
            case .handle(let request):
                _ = describe(request)
                expectations.append(request.method == .head)
                let summary = machine.respond(respond(to: request), to: request, now: now)
                if request.method == .head && summary.bodyBytes != 0 { fatalError("a body was queued for HEAD") }
            case .rejected(let error, let summary):
                expectations.append(error.method == .head)
                if summary.status != error.status { fatalError("refusal \(error) answered with \(summary.status)") }
            case .readMore:
                blocked = false
                return
            case .waitForOutput:
                if !peerReads {
                    blocked = true
                    return
                }
                write(machine.output.count)
            case .close:
                write(machine.output.count)
                closed = true
                return
            }
        }
        fatalError("the state machine made no progress in 10000 steps")
    }

    mutating func advanceClock() {
        now = now.advanced(by: .milliseconds(Int64(random.next() % 15_000)))
        switch machine.checkTimeouts(now: now) {
        case .none:
            break
        case .close:
            closed = true
            abrupt = true
        case .rejected(let error, let summary):
            if error.code != .requestTimeout || summary.status != .requestTimeout { fatalError("unexpected timeout refusal \(error)") }
            expectations.append(error.method == .head)
            blocked = false
            peerReads = true
            drive()
        }
    }

    mutating func writePartially() {
        let queued = machine.output.count
        guard queued > 0 else { return }
        write(Int(random.next() % UInt64(queued + 1)))
        if blocked && peerReads { drive() }
    }

    /// Writes the first `count` queued bytes the way a vectored write would, through `withReadableChunks`.
    mutating func write(_ count: Int) {
        guard count > 0 else { return }
        let maxChunks = Int(random.next() % 4) + 1
        var taken: [UInt8] = []
        machine.output.withReadableChunks(maxChunks: maxChunks) { chunks in
            for chunk in chunks where taken.count < count {
                taken.append(contentsOf: chunk.prefix(count - taken.count))
            }
        }
        if taken.isEmpty { fatalError("no readable chunk while \(machine.output.count) bytes are queued") }
        let expected = machine.output.readableBytes.prefix(taken.count)
        guard expected.elementsEqual(taken) else { fatalError("withReadableChunks disagrees with readableBytes") }
        wire.append(contentsOf: taken)
        now = now.advanced(by: .milliseconds(Int64(random.next() % 50)))
        machine.outputWritten(taken.count, now: now)
        // With fewer chunks offered than `count` spans, a transport writes what it was given, then the rest.
        if taken.count < count && machine.output.count > 0 { write(count - taken.count) }
    }

    func checkBounds() {
        let bound = configuration.outputHighWaterMark + 2 * Self.largestResponse
        if machine.output.count > bound {
            fatalError("\(machine.output.count) bytes queued for a peer that is not reading; bound \(bound)")
        }
    }

    /// Parses everything written as HTTP/1.1 responses and checks them against what was queued.
    func validateWire() {
        var reader = ResponseReader(bytes: wire)
        var index = 0
        while !reader.atEnd {
            // A `100 Continue` precedes the final response of a request whose content was still to come; it
            // answers nothing by itself (RFC 9110 §15.2).
            if reader.skipContinue() { continue }
            guard index < expectations.count else {
                fatalError("more responses on the wire than requests and refusals (\(expectations.count))")
            }
            switch reader.readResponse(omitBody: expectations[index]) {
            case .complete(let closes):
                index += 1
                if closes && !reader.atEnd { fatalError("bytes written after a Connection: close response") }
            case .truncated:
                if !abrupt { fatalError("a response was cut off although the connection closed gracefully") }
                return
            case .malformed(let reason):
                fatalError("malformed response #\(index): \(reason)\nwire: \(String(decoding: wire, as: UTF8.self))")
            }
        }
        if !abrupt && index != expectations.count {
            fatalError("\(expectations.count) responses were queued but \(index) were written")
        }
    }
}

/// A strict reader of the responses the encoder writes.
struct ResponseReader {
    let bytes: [UInt8]
    var position = 0

    enum Outcome {
        case complete(closes: Bool)
        case truncated
        case malformed(String)
    }

    var atEnd: Bool { position >= bytes.count }

    /// Moves past an interim `100 Continue` response; false when the next bytes are not one.
    mutating func skipContinue() -> Bool {
        let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        guard bytes[position...].starts(with: interim) else { return false }
        position += interim.count
        return true
    }

    /// The next line without its CRLF, nil when the bytes end first. A bare CR or LF makes it malformed.
    mutating func line() -> Result<ArraySlice<UInt8>, LineError> {
        var index = position
        while index < bytes.count {
            if bytes[index] == 0x0A { return .failure(.bareLineFeed) }
            if bytes[index] == 0x0D {
                guard index + 1 < bytes.count else { return .failure(.truncated) }
                guard bytes[index + 1] == 0x0A else { return .failure(.bareCarriageReturn) }
                let line = bytes[position..<index]
                position = index + 2
                return .success(line)
            }
            index += 1
        }
        return .failure(.truncated)
    }

    enum LineError: Error {
        case truncated, bareLineFeed, bareCarriageReturn
    }

    mutating func readResponse(omitBody: Bool) -> Outcome {
        let statusLine: ArraySlice<UInt8>
        switch line() {
        case .success(let line): statusLine = line
        case .failure(.truncated): return .truncated
        case .failure(let error): return .malformed("status line: \(error)")
        }
        let prefix = Array("HTTP/1.1 ".utf8)
        guard statusLine.count >= 13, statusLine.prefix(9).elementsEqual(prefix) else {
            return .malformed("status line \(String(decoding: statusLine, as: UTF8.self))")
        }
        let codeBytes = statusLine.dropFirst(9).prefix(3)
        guard codeBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), statusLine[statusLine.startIndex + 12] == 0x20,
              statusLine.dropFirst(13).allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
        else { return .malformed("status line \(String(decoding: statusLine, as: UTF8.self))") }
        let code = codeBytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        var contentLength: Int?
        var dates = 0
        var closes = false
        var names = Set<String>()
        while true {
            let field: ArraySlice<UInt8>
            switch line() {
            case .success(let line): field = line
            case .failure(.truncated): return .truncated
            case .failure(let error): return .malformed("field line: \(error)")
            }
            if field.isEmpty { break }
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > field.startIndex else {
                return .malformed("field line without a name: \(String(decoding: field, as: UTF8.self))")
            }
            let name = String(decoding: field[..<colon], as: UTF8.self).lowercased()
            guard field[..<colon].allSatisfy(isTokenCharacter) else { return .malformed("field name \(name)") }
            let value = field[(colon + 1)...]
            guard value.first == 0x20, value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                return .malformed("value of \(name)")
            }
            let text = String(decoding: value.dropFirst(), as: UTF8.self)
            switch name {
            case "content-length":
                guard contentLength == nil, let length = Int(text), length >= 0 else { return .malformed("Content-Length \(text)") }
                contentLength = length
            case "date":
                dates += 1
                guard text.utf8.count == 29, text.hasSuffix(" GMT") else { return .malformed("Date \(text)") }
            case "connection":
                guard !names.contains(name), text == "close" || text == "keep-alive" else { return .malformed("Connection \(text)") }
                closes = text == "close"
            case "transfer-encoding":
                return .malformed("Transfer-Encoding in a response")
            default:
                break
            }
            names.insert(name)
        }
        guard dates == 1 else { return .malformed("\(dates) Date fields") }
        let forbidsContent = (100..<200).contains(code) || code == 204 || code == 304
        if (100..<200).contains(code) || code == 204 {
            guard contentLength == nil else { return .malformed("Content-Length on \(code)") }
        } else if code != 304 {
            guard contentLength != nil else { return .malformed("no Content-Length on \(code)") }
        }
        let bodyLength = omitBody || forbidsContent ? 0 : (contentLength ?? 0)
        guard bytes.count - position >= bodyLength else { return .truncated }
        position += bodyLength
        return .complete(closes: closes)
    }
}

func isTokenCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Mostly short reads, sometimes a whole socket buffer.
    mutating func chunkLength() -> Int {
        switch next() % 8 {
        case 0, 1, 2: Int(next() % 4) + 1
        case 3, 4, 5: Int(next() % 64) + 1
        case 6: Int(next() % 1024) + 1
        default: 65_536
        }
    }
}
