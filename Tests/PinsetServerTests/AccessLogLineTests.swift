import Foundation
@testable import PinsetServer
import Testing

/// The access log writes its lines by hand, for speed; these tests hold it to the lines the log handler writes for
/// every other event: the same fields, order and escaping, in text and in JSON, for hostile values too.
struct AccessLogLineTests {
    static let time = (prefix: Array("2026-11-27T03:15:17".utf8), milliseconds: 42)

    static func entry(target: String = "/acme.json.signed", userAgent: String? = "curl/8.0", method: String = "GET", status: Int = 200, bytes: Int = 1234) -> AccessLogEntry {
        AccessLogEntry(remoteAddress: "127.0.0.1", method: method, target: target, status: status, bodyBytes: bytes, duration: .microseconds(1500), userAgent: userAgent)
    }

    /// Hostile values a client controls: the target and the User-Agent.
    static let hostile: [String] = [
        "/plain", "/with space", "/quote\"d", "/eq=ual", "/back\\slash", "/new\nline", "/tab\there", "/\u{1b}[2J", "/é", "/\u{202e}override",
        "", "/\u{7f}", String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self),
    ]

    @Test(arguments: hostile) func aTextLineIsTheLineTheLogHandlerWrites(_ value: String) {
        var bytes: [UInt8] = []
        AccessLogLine.appendText(Self.entry(target: value, userAgent: value), time: Self.time, to: &bytes)
        let fields = ["bytes": "1234", "duration_us": "1500", "method": "GET", "remote": "127.0.0.1", "status": "200", "target": value, "user_agent": value]
        let expected = "2026-11-27T03:15:17.042Z info pinset: request"
            + fields.keys.sorted().map { " \(LineLogHandler.field($0))=\(LineLogHandler.field(fields[$0]!))" }.joined() + "\n"
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(bytes.filter { $0 == UInt8(ascii: "\n") }.count == 1, "one line, whatever the value holds")
    }

    @Test(arguments: hostile) func aJSONLineIsTheObjectJSONSerializationWrites(_ value: String) throws {
        var bytes: [UInt8] = []
        AccessLogLine.appendJSON(Self.entry(target: value, userAgent: value), time: Self.time, to: &bytes)
        let object: [String: Any] = [
            "ts": "2026-11-27T03:15:17.042", "level": "info", "logger": "pinset", "msg": "request", "bytes": "1234", "duration_us": "1500",
            "method": "GET", "remote": "127.0.0.1", "status": "200", "target": value, "user_agent": value,
        ]
        var expected = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        expected.append(UInt8(ascii: "\n"))
        #expect(bytes == [UInt8](expected), "\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test func aMissingUserAgentAndNumbersOfEveryWidthAreWrittenAsBefore() {
        for bytesSent in [0, 7, 10, 99, 100, 123_456_789, Int.max] {
            var bytes: [UInt8] = []
            AccessLogLine.appendText(Self.entry(userAgent: nil, bytes: bytesSent), time: Self.time, to: &bytes)
            let line = String(decoding: bytes, as: UTF8.self)
            #expect(line.contains(" bytes=\(bytesSent) ") && line.hasSuffix(" user_agent=-\n"), "\(line)")
        }
        var negative: [UInt8] = []
        AccessLogLine.appendDecimal(-305, to: &negative)
        #expect(String(decoding: negative, as: UTF8.self) == "-305")
    }

    @Test func theClockWritesTheSecondAsTheLogHandlerFormatsIt() {
        let (prefix, milliseconds) = AccessLogClock().now()
        let formatted = Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash).timeZone(separator: .omitted))
        // The same shape, and the same minute (the two readings may fall either side of a second).
        #expect(prefix.count == 19 && String(decoding: prefix, as: UTF8.self).prefix(16) == formatted.prefix(16), "\(String(decoding: prefix, as: UTF8.self)) vs \(formatted)")
        #expect((0...999).contains(milliseconds))
    }

    /// Lines wait in a loop's buffer until it holds a block or the oldest has waited the flush interval, and a stop
    /// writes the rest: a file written by the real descriptor holds every line, whole, in order.
    @Test func aBufferWritesByBlockByTimeAndOnStop() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString).log").path
        defer { unlink(path) }
        let log = try AccessLog(destination: .file(path), format: .text, blockSize: 1024, flushInterval: .seconds(3600))
        let buffer = log.makeBuffer()
        func lines() throws -> [Substring] { try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
        buffer.append(Self.entry(target: "/first"))
        #expect(try lines().isEmpty, "one line waits")
        buffer.flushIfDue(now: .now)
        #expect(try lines().isEmpty, "not yet due")
        buffer.flushIfDue(now: .now + .seconds(3601))
        #expect(try lines().count == 1, "due after the interval")
        for index in 0..<20 { buffer.append(Self.entry(target: "/\(index)")) }
        let written = try lines().count
        #expect(written > 1 && written < 21, "a full block is written without waiting: \(written)")
        buffer.flush()
        let all = try lines()
        #expect(all.count == 21 && all.last?.contains("target=/19 ") == true && all.allSatisfy { $0.hasSuffix("user_agent=curl/8.0") })
    }

    @Test func aFileThatCannotBeOpenedIsRefusedWithItsPath() {
        #expect { try AccessLog(destination: .file("/nonexistent-directory/access.log"), format: .text) } throws: { error in
            "\(error)".contains("/nonexistent-directory/access.log") && "\(error)".contains("directory exists")
        }
    }
}
