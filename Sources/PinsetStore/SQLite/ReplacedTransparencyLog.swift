import Foundation
import GRDB
import PinsetCore
import PinsetTransparency

/// The transparency log of the database a restore replaces: what the deployment logged, and may have served in
/// checkpoints and proofs, up to the restore.
///
/// A backup holds the log as it was when the backup was taken, a prefix of this one. A restore that kept only the
/// backup's log would take the log back to that size, and the versions it raises would then be appended at indices
/// the replaced log had already used for other entries: a fork, which every witness and client that saw the
/// replaced log's checkpoints must refuse. So the restore carries the entries appended since the backup over, and
/// appends its own after them (`carry(into:force:)`).
struct ReplacedTransparencyLog {
    enum Source {
        /// A SQLite file, read without the store (it may predate this program's schema).
        case sqliteFile(String)
        /// The database the servers use, read through a read-only store.
        case store(StoreLocation)
    }

    var size: UInt64
    var source: Source

    /// The log of the SQLite database `db`, or `nil` when it has none (it predates the log, or is empty).
    static func read(_ db: Database, path: String) throws -> ReplacedTransparencyLog? {
        guard try db.tableExists("transparency_log_entry") else { return nil }
        let size = try TransparencyLogAppender.storedSize(SQLiteConnection(db: db))
        return size > 0 ? ReplacedTransparencyLog(size: size, source: .sqliteFile(path)) : nil
    }

    /// Opens the replaced database again, read-only, for one read transaction.
    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        switch source {
        case .sqliteFile(let path):
            var readOnly = Configuration()
            readOnly.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: readOnly)
            defer { try? queue.close() }
            return try queue.read { db in try body(SQLiteConnection(db: db)) }
        case .store(let location):
            let store = try PinStore(location: location, readOnly: true)
            defer { try? store.close() }
            return try store.database.read(body)
        }
    }

    var displayName: String {
        switch source {
        case .sqliteFile(let path): path
        case .store(let location): location.description
        }
    }

    /// Appends to the restored database's log (`db`, inside the restore's transaction) the entries the replaced
    /// log has beyond it, once the restored log is shown to be a prefix of the replaced one (equal roots at the
    /// restored size). Returns how many entries were carried.
    ///
    /// - Throws: `StoreError.restoreRefused` when the two logs differ within the restored log's size (a backup of
    ///   another deployment, or from before the log existed, whose log the migration made from its customers):
    ///   restoring it would fork the published log. With `force` the backup's log is kept as it is instead, and
    ///   nothing is carried. Also refused when the replaced log's entries do not hash to its stored hashes.
    @discardableResult
    func carry(into db: any StoreConnection, force: Bool) throws -> UInt64 {
        let restoredSize = try TransparencyLogAppender.storedSize(db)
        return try read { replaced in
            let replacedSize = try TransparencyLogAppender.storedSize(replaced)
            let common = min(restoredSize, replacedSize)
            let replacedRoot = try TreeHead.compute(size: common, from: StoredMerkleHashes(db: replaced))
            guard try TreeHead.compute(size: common, from: StoredMerkleHashes(db: db)) == replacedRoot else {
                if force { return 0 }
                throw StoreError(.restoreRefused, "The backup's transparency log is not a prefix of the log of \(displayName): their first \(common) entries differ (the backup is of another deployment, or was taken before the log existed). Restoring it would fork the log that checkpoints and proofs were served from, and witnesses and apps would refuse every later checkpoint. Nothing was changed. Restore a backup of this deployment taken since it has had a log, or pass --accept-damaged to start from the backup's log anyway.")
            }
            guard replacedSize > restoredSize else { return 0 }
            var appender = try TransparencyLogAppender(db)
            try replaced.forEachRow("""
                SELECT log_index, leaf_data, appended_at FROM transparency_log_entry WHERE log_index >= ? ORDER BY log_index
                """, [Int64(restoredSize)]) { row in
                let leafData: [UInt8] = try row.decode(atIndex: 1)
                let entry: PinSetLogEntry
                do {
                    entry = try PinSetLogEntry(encoded: leafData)
                } catch {
                    throw StoreError(.restoreRefused, "Entry \(try row.decode(Int64.self, atIndex: 0)) of the transparency log of \(displayName) is not a pin-set entry (\(error)). Nothing was changed.")
                }
                try appender.append(entry, leafData: leafData, at: try row.decode(atIndex: 2), db)
            }
            try appender.flush(db)
            let carried = try TreeHead.compute(size: replacedSize, from: StoredMerkleHashes(db: db))
            guard appender.size == replacedSize, carried == (try TreeHead.compute(size: replacedSize, from: StoredMerkleHashes(db: replaced))) else {
                throw StoreError(.restoreRefused, "The transparency log of \(displayName) does not match its own stored hashes (it was edited by hand or is damaged), so it cannot be carried into the restored database. Nothing was changed.")
            }
            return replacedSize - restoredSize
        }
    }
}
