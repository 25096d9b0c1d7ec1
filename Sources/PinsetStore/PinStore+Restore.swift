import Foundation
import GRDB
import PinsetCore

extension PinStore {
    /// Replaces the database at `databasePath` with a copy of `backup`, and raises every customer's content
    /// version so apps accept the restored pins.
    ///
    /// Apps hold the versions the replaced database served, which may be newer than the backup's. In one
    /// transaction on the new copy, each customer's version becomes max(backup version + 1, now in
    /// milliseconds, highest version the replaced database recorded for the name + 1), with an audit entry
    /// per customer; the high-water marks and the change counter are carried over from the replaced database
    /// too, and the backup mark is cleared. The copy is then renamed over `databasePath`: readers see the old
    /// database or the complete new one. The backup file itself is only read. `backup` may be `databasePath`
    /// itself, for a backup that was copied into place by hand.
    ///
    /// Refused, with nothing changed, when the backup fails SQLite's integrity check or is not a Pinset
    /// database, when another process has the database open (a running server: SQLite cannot leave WAL mode
    /// then), or when the current database cannot be read and `force` is false. With `force`, an unreadable
    /// database is replaced and versions are raised to the clock only.
    public static func restore(backup: String, over databasePath: String, actor: String, force: Bool = false) throws -> RestoreReport {
        try restore(backup: backup, over: databasePath, actor: actor, force: force, clock: { Date() })
    }

    static func restore(backup: String, over databasePath: String, actor: String, force: Bool, clock: @escaping @Sendable () -> Date) throws -> RestoreReport {
        guard !actor.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw StoreError(.invalidInput, "The actor is empty. Pass --actor with the name of the person making the change, or run as a named OS user.")
        }
        let marker = try RestoreSource.check(backup)
        let replaced = try ReplacedDatabaseReader.read(databasePath, force: force)

        let database = URL(fileURLWithPath: databasePath)
        let temporary = database.deletingLastPathComponent().appendingPathComponent(".\(database.lastPathComponent).restore-\(UUID().uuidString)").path
        let descriptor = Foundation.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, newFileMode)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw StoreError(.restoreRefused, "Cannot create a file in \(database.deletingLastPathComponent().path) for the restored database: \(reason). Nothing was changed. Run the restore as the user that owns the data directory.")
        }
        close(descriptor)
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            let source = try DatabaseQueue(path: backup, configuration: readOnly)
            let copy = try DatabaseQueue(path: temporary)
            try source.backup(to: copy)
            try source.close()
            try copy.close()

            let restored = try PinStore(path: temporary, allowingUnrestoredBackup: true, clock: clock)
            let note = marker.map { "restored from a backup of \($0.source) taken \($0.takenAt.formatted(.iso8601))" } ?? "restored from \(backup)"
            let customers = try restored.raiseVersionsAfterRestore(above: replaced.versions, changeCounter: replaced.changeCounter, note: note, actor: actor)
            try restored.pool.close()

            // One self-contained file, so that the rename is the whole switch-over.
            let single = try DatabaseQueue(path: temporary)
            _ = try single.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
            try single.close()
            guard !FileManager.default.fileExists(atPath: temporary + "-wal") else {
                throw StoreError(.restoreRefused, "The restored copy \(temporary) still has a write-ahead log. Nothing was changed. Check that no other program opened it, then run the restore again.")
            }
            guard rename(temporary, databasePath) == 0 else {
                let reason = String(cString: strerror(errno))
                throw StoreError(.restoreRefused, "Cannot move the restored database into place at \(databasePath): \(reason). Nothing was changed.")
            }
            syncDirectory(of: database)
            return RestoreReport(customers: customers, marker: marker, replacedDatabase: replaced.state)
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
            throw error
        }
    }

    /// In one transaction: carries the replaced database's high-water marks and change counter over, moves
    /// every customer to its next version (see `ChangeRecorder.nextVersion`) with an audit entry, and
    /// clears the backup mark.
    func raiseVersionsAfterRestore(above floors: [String: Int64], changeCounter: Int64, note: String, actor: String) throws -> [RestoreReport.Customer] {
        try pool.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            for (name, version) in floors where version >= 1 {
                try change.raiseHighWater(name, to: version)
            }
            try db.execute(sql: "UPDATE change_counter SET value = max(value, ?) WHERE id = 1", arguments: [changeCounter])
            var raised: [RestoreReport.Customer] = []
            let rows = try Row.fetchAll(db, sql: "SELECT \(StoredRows.customerColumns) FROM customer ORDER BY name COLLATE BINARY")
            for row in rows {
                let customer = try StoredRows.customerRow(row)
                let version = try change.recordChange(of: customer, .restored, "\(note); version \(customer.version) raised above every version served")
                raised.append(RestoreReport.Customer(name: customer.name, backupVersion: customer.version, version: version))
            }
            try BackupMarker.clear(db)
            return raised
        }
    }
}

/// Checks the file to restore from before anything is touched.
enum RestoreSource {
    /// The backup's mark (`nil` for a plain copy of a database).
    static func check(_ backup: String) throws -> BackupMarker? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw StoreError(.restoreRefused, "There is no backup file at \(backup). Nothing was changed. Give the path of a file written by 'pinset backup'.")
        }
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            let source = try DatabaseQueue(path: backup, configuration: readOnly)
            defer { try? source.close() }
            return try source.read { db in
                let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard problems == ["ok"] else {
                    throw StoreError(.restoreRefused, "The backup \(backup) fails SQLite's integrity check (\(problems.prefix(3).joined(separator: "; "))). Nothing was changed. Restore an older backup.")
                }
                guard try db.tableExists("customer"), try db.tableExists("customer_version_high_water") else {
                    throw StoreError(.restoreRefused, "The file \(backup) is not a Pinset database. Nothing was changed. Give a file written by 'pinset backup'.")
                }
                return try BackupMarker.read(db)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.restoreRefused, "Cannot read \(backup) as a database: \(error). Nothing was changed. Give a file written by 'pinset backup'.")
        }
    }
}

/// Reads what the database about to be replaced served, and makes sure no other process is using it.
enum ReplacedDatabaseReader {
    struct Result {
        /// The highest version recorded per customer name (lower-cased), from customers, high-water marks
        /// and the audit log.
        var versions: [String: Int64]
        var changeCounter: Int64
        var state: RestoreReport.ReplacedDatabase
    }

    static func read(_ path: String, force: Bool) throws -> Result {
        guard FileManager.default.fileExists(atPath: path) else {
            // A -wal file without its database would be replayed into the restored one.
            for suffix in ["-wal", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
                throw StoreError(.restoreRefused, "There is no database at \(path), but \(path)\(suffix) is left over from one. Nothing was changed. Move \(path)\(suffix) out of the way (it belongs to a database that is gone), then run the restore again.")
            }
            return Result(versions: [:], changeCounter: 0, state: .absent)
        }
        do {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            // Leaving WAL mode needs every other connection closed, so this fails while a server has the
            // database open; and it leaves the old file self-contained, with no -wal file beside it.
            let mode = try queue.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
            guard mode?.lowercased() == "delete" else { throw inUse(path) }
            return try queue.read { db in
                guard try db.tableExists("customer") else { return Result(versions: [:], changeCounter: 0, state: .read) }
                var versions: [String: Int64] = [:]
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT name, version FROM customer
                    UNION ALL SELECT name, version FROM customer_version_high_water
                    UNION ALL SELECT customer, version FROM audit_log
                    """)
                while let row = try rows.next() {
                    let name: String = try row.decode(atIndex: 0)
                    let version: Int64 = try row.decode(atIndex: 1)
                    versions[name.lowercased()] = max(versions[name.lowercased()] ?? 0, version)
                }
                let counter = try Int64.fetchOne(db, sql: "SELECT value FROM change_counter WHERE id = 1") ?? 0
                return Result(versions: versions, changeCounter: counter, state: .read)
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw inUse(path)
        } catch let error as StoreError {
            throw error
        } catch {
            guard force else {
                throw StoreError(.restoreRefused, "Cannot read the current database \(path) (\(error)), so the versions it served are unknown. Nothing was changed. If it is damaged, run the restore again with --force: versions are then raised to the current time in milliseconds, which is above anything served unless this machine's clock was behind the one that served them.")
            }
            return Result(versions: [:], changeCounter: 0, state: .unreadable(reason: "\(error)"))
        }
    }

    static func inUse(_ path: String) -> StoreError {
        StoreError(.restoreRefused, "The database \(path) is open in another process, most likely a running 'pinset serve'. Nothing was changed. Stop every server and command using it, then run the restore again.")
    }
}
