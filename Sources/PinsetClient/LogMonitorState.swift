import Foundation
import PinsetFileSystem
import PinsetTransparency

/// What a monitor keeps between runs: the last checkpoint it verified, as the log signed it, and the latest
/// version it saw logged for each customer.
///
/// The checkpoint note is kept whole, signatures included, so that when a later checkpoint contradicts it the two
/// signed notes together are evidence of a split view anyone can check.
public struct LogMonitorState: Codable, Hashable, Sendable {
    /// The signed checkpoint note, exactly as the log served it.
    public var checkpointNote: String
    /// Customer name to the highest content version logged for it, over every entry processed so far.
    public var latestVersions: [String: Int64]
    /// Customer name to the content hash (base64) of that highest version's entry. Absent in state files written
    /// before content was compared.
    public var latestContentSHA256: [String: String]?
    /// Customer name to the pins, by host, of the last served content the monitor compared with the log: what the
    /// next comparison reports changes against.
    public var comparedPins: [String: [String: [String]]]?

    public init(
        checkpointNote: String, latestVersions: [String: Int64], latestContentSHA256: [String: String]? = nil,
        comparedPins: [String: [String: [String]]]? = nil
    ) {
        self.checkpointNote = checkpointNote
        self.latestVersions = latestVersions
        self.latestContentSHA256 = latestContentSHA256
        self.comparedPins = comparedPins
    }

    /// The newest logged entry of each customer whose content hash is known.
    var latestContents: [String: LoggedContent] {
        var contents: [String: LoggedContent] = [:]
        for (customer, hash) in latestContentSHA256 ?? [:] {
            if let version = latestVersions[customer] { contents[customer] = LoggedContent(version: version, contentSHA256: hash) }
        }
        return contents
    }

    /// The kept checkpoint, which must be from `origin`.
    ///
    /// Its signatures are not checked again: it was verified when kept, and the log's keys may have been rotated
    /// since; a state file for another log is refused rather than compared with this one.
    func checkpoint(origin: String, path: String) throws(LogMonitorError) -> Checkpoint {
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint(noteText: SignedNote(parsing: checkpointNote).text)
        } catch {
            throw LogMonitorError(.stateFile, "The state file \(path) does not hold a checkpoint note (\(error)). Restore it from a backup, or move it away to start again from the log's first entry.")
        }
        guard checkpoint.origin == origin else {
            throw LogMonitorError(.stateFile, "The state file \(path) follows the log '\(checkpoint.origin)', not '\(origin)'. Give each log its own --state file.")
        }
        return checkpoint
    }

    /// The state in `path`; `nil` when there is no such file (a first run).
    public static func load(from path: String) throws(LogMonitorError) -> LogMonitorState? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(LogMonitorState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw LogMonitorError(.stateFile, "The state file \(path) cannot be read as a monitor's state (\(error)). Restore it from a backup, or move it away to start again from the log's first entry.")
        }
    }

    /// Replaces `path` atomically: a crash leaves the previous state or this one, never a mix.
    public func save(to path: String) throws(LogMonitorError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try AtomicFile.write(Array(try encoder.encode(self)), to: path)
        } catch {
            throw LogMonitorError(.stateFile, "The state could not be saved to \(path): \(error) Check the directory exists and is writable; the next run processes the same entries again.")
        }
    }
}
