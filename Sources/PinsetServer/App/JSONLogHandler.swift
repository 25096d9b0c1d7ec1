import Foundation
import Logging

/// One JSON object per line on standard output: `ts`, `level`, `logger`, `msg` and the metadata, for log
/// pipelines that index fields.
public struct JSONLogHandler: LogHandler {
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
        var object: [String: Any] = [
            "ts": Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateSeparator(.dash)),
            "level": event.level.rawValue,
            "logger": label,
            "msg": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new }) {
            object[key] = value.description
        }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(UInt8(ascii: "\n"))
        Self.output.update { $0.write(line) }
    }
}
