import Foundation
import PinsetCore
import PinsetFileSystem

/// What a reporting client keeps between launches, in `<stateDirectory>/<customer>.pinset-reports` (mode 0600,
/// written atomically): its random installation id, when it last reported each host, and the reports not sent
/// yet, oldest first, within the configured count and byte bounds.
///
/// An unreadable or malformed file is replaced: reports are best effort, and losing a queue never affects pins.
struct PinFailureReportQueue: Equatable {
    var installationID: String
    /// Host name → Unix seconds of its last report.
    var lastReported: [String: Int64] = [:]
    /// Report JSON texts, oldest first.
    var pending: [String] = []

    /// Bound on the file read back, whatever the configured queue size.
    static let maximumFileBytes = 4 * 1024 * 1024

    static func load(from path: String) -> PinFailureReportQueue? {
        guard AtomicFile.exists(path), let bytes = try? AtomicFile.read(path, limit: maximumFileBytes),
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let installationID = object["installation-id"] as? String, !installationID.isEmpty
        else { return nil }
        var queue = PinFailureReportQueue(installationID: installationID)
        for (host, value) in object["last-reported"] as? [String: Any] ?? [:] {
            if let seconds = value as? Int { queue.lastReported[host] = Int64(seconds) }
        }
        queue.pending = (object["pending"] as? [Any] ?? []).compactMap { $0 as? String }
        return queue
    }

    func save(to path: String, stateDirectory: String) throws(FileSystemError) {
        let object: [String: Any] = ["installation-id": installationID, "last-reported": lastReported, "pending": pending]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        try AtomicFile.createDirectory(stateDirectory, mode: 0o700)
        try AtomicFile.write([UInt8](data), to: path, mode: 0o600)
    }

    /// Appends `report` and drops the oldest reports until the queue is within `maximumCount` and `maximumBytes`.
    mutating func append(_ report: String, maximumCount: Int, maximumBytes: Int) {
        pending.append(report)
        var bytes = pending.reduce(0) { $0 + $1.utf8.count }
        while !pending.isEmpty && (pending.count > maximumCount || bytes > maximumBytes) {
            bytes -= pending.removeFirst().utf8.count
        }
    }

    /// Forgets hosts whose last report is older than `interval`, so the table stays as small as the set of
    /// hosts failing now.
    mutating func forgetReportsBefore(_ unixSeconds: Int64) {
        lastReported = lastReported.filter { $0.value >= unixSeconds }
    }
}
