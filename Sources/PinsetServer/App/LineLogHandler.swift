import Foundation
import Logging
import PinsetCore

/// One line per event on standard output, as text or as a JSON object.
///
/// Text: `ts level logger: msg key=value …`, logfmt-style. A value with a space, quote, `=`, backslash or
/// control character is quoted and escaped, so a client-supplied value (a User-Agent, a request target) can
/// never forge another field or another line.
///
/// JSON: `ts`, `level`, `logger`, `msg` and the metadata as one object, for log pipelines that index fields.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: ServerConfiguration.LogFormat
    /// Taken for every write to standard output, so that lines (and the access log's blocks) never interleave.
    private static let standardOutputLock = LockedValue(())

    public init(label: String, format: ServerConfiguration.LogFormat) {
        self.label = label
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new })
        let line: Data?
        switch format {
        case .text: line = textLine(event, fields)
        case .json: line = jsonLine(event, fields)
        }
        guard let line else { return }
        // Not `FileHandle.write(_:)`, which traps when the write fails: a log reader that went away (EPIPE) or a
        // full disk must cost log lines, never the server.
        line.withUnsafeBytes { Self.writeToStandardOutput($0) }
    }

    private func textLine(_ event: LogEvent, _ fields: Logger.Metadata) -> Data {
        let timestamp = Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash).timeZone(separator: .omitted))
        var line = "\(timestamp) \(event.level.rawValue) \(label): \(TerminalText.escape(event.message.description))"
        for key in fields.keys.sorted() {
            line += " \(Self.field(key))=\(Self.field(fields[key]?.description ?? ""))"
        }
        line += "\n"
        return Data(line.utf8)
    }

    private func jsonLine(_ event: LogEvent, _ fields: Logger.Metadata) -> Data? {
        var object: [String: Any] = [
            "ts": Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash)),
            "level": event.level.rawValue,
            "logger": label,
            "msg": event.message.description,
        ]
        for (key, value) in fields {
            object[key] = value.description
        }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return nil }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Writes a block of whole lines (the access log's) to standard output under the lock every line takes, so that
    /// no other log line lands inside the block.
    static func writeToStandardOutput(_ bytes: UnsafeRawBufferPointer) {
        standardOutputLock.withLock { _ in AccessLog.writeAll(bytes, to: STDOUT_FILENO) }
    }

    /// A key or value as one logfmt token.
    static func field(_ value: String) -> String {
        let plain = !value.isEmpty && !value.unicodeScalars.contains {
            $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || TerminalText.needsEscaping($0)
        }
        if plain { return value }
        return "\"" + TerminalText.escape(value).replacing("\"", with: "\\\"") + "\""
    }
}
