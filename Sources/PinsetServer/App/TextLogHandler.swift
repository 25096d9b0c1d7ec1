import Foundation
import Logging
import PinsetCore

/// One line per event on standard output: `ts level logger: msg key=value …`, logfmt-style. A value with a
/// space, quote, `=`, backslash or control character is quoted and escaped, so a client-supplied value (a
/// User-Agent, a request target) can never forge another field or another line.
public struct TextLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private static let output = LockedValue(FileHandle.standardOutput)

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let timestamp = Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash).timeZone(separator: .omitted))
        var line = "\(timestamp) \(event.level.rawValue) \(label): \(TerminalText.escape(event.message.description))"
        let fields = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new })
        for key in fields.keys.sorted() {
            line += " \(Self.field(key))=\(Self.field(fields[key]?.description ?? ""))"
        }
        line += "\n"
        let bytes = Data(line.utf8)
        Self.output.update { $0.write(bytes) }
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
