import Foundation
import PinsetHTTP
import PinsetTestSupport
import Testing

/// Replays the HTTP fuzzer's inputs through the normal test suite: the committed seed corpus and every input kept
/// in `Fuzz/regressions/http-parser/` after a fix. Each must parse identically whole and one byte at a time (also
/// where content is accepted), keep the parser's buffer within one maximal head and content, and drive a
/// connection to a clean close.
@Suite("Fuzz regressions: HTTP")
struct HTTPFuzzRegressionTests {
    static func inputs(_ target: String) -> [String] {
        FuzzInputs.paths(for: target)
    }

    @Test(arguments: inputs("http-parser"))
    func replay(_ path: String) throws {
        let input = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        for limits in [HTTPLimits(), HTTPLimits(maxRequestLineBytes: 40, maxHeaderBytes: 96, maxHeaderCount: 3),
                       HTTPLimits(maxRequestLineBytes: 40, maxHeaderBytes: 96, maxHeaderCount: 3, maxContentBytes: 64)] {
            let whole = Self.parse([input[...]], limits: limits)
            let byteByByte = Self.parse(input.indices.map { input[$0...$0] }, limits: limits)
            #expect(whole == byteByByte, "the outcome depends on chunking")
        }

        var harness = ConnectionHarness()
        harness.machine.receive(input, now: harness.time)
        _ = harness.run()
        harness.machine.peerClosedInput()
        let (output, last) = harness.run()
        #expect(last.isClose)
        #expect(output.isEmpty || output.hasPrefix("HTTP/1.1 "))
    }

    /// Kept hostile inputs say what they must get on a listener that accepts content: `refused-…` a failure,
    /// `accepted-…` none (their last request may stay incomplete).
    @Test(arguments: inputs("http-parser").filter { $0.contains("/regressions/") })
    func namedOutcome(_ path: String) throws {
        let input = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let outcome = Self.parse([input[...]], limits: HTTPLimits(maxContentBytes: 64))
        let name = URL(fileURLWithPath: path).lastPathComponent
        if name.hasPrefix("refused-") { #expect(outcome.last == "failed", "\(name): \(outcome)") }
        if name.hasPrefix("accepted-") { #expect(outcome.last != "failed" && outcome.count > 1, "\(name): \(outcome)") }
    }

    /// Heads as text, then `failed` or `incomplete`.
    static func parse(_ chunks: [ArraySlice<UInt8>], limits: HTTPLimits) -> [String] {
        var parser = HTTPRequestParser(limits: limits)
        var outcome: [String] = []
        for chunk in chunks {
            parser.append(chunk)
            parsing: while true {
                switch parser.next() {
                case .head(let head):
                    outcome.append("\(head.method) \(head.target) \(head.version) \(head.keepAlive) \(head.headers.map { "\($0.name)=\($0.value)" }) \(head.body)")
                case .failure:
                    return outcome + ["failed"]
                case .incomplete:
                    #expect(parser.bufferedByteCount <= limits.maxBufferedRequestBytes)
                    break parsing
                }
            }
        }
        return outcome + ["incomplete"]
    }
}

/// Replays the PROXY header inputs: the outcome never depends on how the bytes were split, and a header is
/// reported complete only once all of its bytes are there.
@Suite("Fuzz regressions: PROXY header")
struct PROXYHeaderFuzzRegressionTests {
    @Test(arguments: FuzzInputs.paths(for: "proxy-header"))
    func replay(_ path: String) throws {
        let input = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let whole = PROXYHeaderParser.parse(input)
        for cut in 0...input.count {
            let partial = PROXYHeaderParser.parse(input.prefix(cut))
            switch whole {
            case .header(_, let length):
                #expect(cut < length ? partial == .incomplete : partial == whole, "prefix of \(cut) bytes")
            case .invalid:
                if case .header = partial { Issue.record("a prefix of \(cut) bytes parsed as a header") }
            case .incomplete:
                #expect(partial == .incomplete, "prefix of \(cut) bytes")
            }
        }
    }
}

