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
    /// database is replaced and versions are raised to the clock only. The in-use check runs once, before
    /// the copy: a process that opens the database during the restore is not seen, so servers must stay
    /// stopped until it returns.
    ///
    /// `replacing` names the database the servers use when it is not the file at `databasePath` (a PostgreSQL
    /// deployment is restored into a new SQLite file, then copied into PostgreSQL): its versions and revocation
    /// floors are carried over too. Without it, a `databasePath` with no database is refused unless `force`
    /// says the deployment's database is lost: nothing would then keep a floor set after the backup, and the
    /// signers it revoked would sign again.
    public static func restore(backup: String, over databasePath: String, replacing: StoreLocation? = nil, actor: String, force: Bool = false) throws -> RestoreReport {
        try restore(backup: backup, over: databasePath, replacing: replacing, actor: actor, force: force, clock: { Date() })
    }

    static func restore(
        backup: String, over databasePath: String, replacing: StoreLocation? = nil, actor: String, force: Bool, clock: @escaping @Sendable () -> Date
    ) throws -> RestoreReport {
        guard !actor.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw StoreError(.invalidInput, "The actor is empty. Pass --actor with the name of the person making the change, or run as a named OS user.")
        }
        let checked = try RestoreSource.check(backup)
        let marker = checked.marker
        var replaced = try ReplacedDatabaseReader.read(databasePath, force: force, auditSince: checked.auditEnd)
        if let replacing {
            replaced.include(try ReplacedDatabaseReader.read(servedBy: replacing, auditSince: checked.auditEnd))
        } else if replaced.state == .absent && !force {
            throw StoreError(.restoreRefused, "There is no database at \(databasePath), so the versions and revocation floors (signers-not-before) that apps hold are unknown; restored alone, the backup could lower them and let revoked signers sign again. Nothing was changed. Give the database the servers use now with --replacing (a path or a postgres:// URL), or, if that database is lost, pass --accept-damaged: versions are then raised to the current time, and floors are those of the backup.")
        }

        let database = URL(fileURLWithPath: databasePath)
        let temporary = database.deletingLastPathComponent().appendingPathComponent(".\(database.lastPathComponent).restore-\(UUID().uuidString)").path
        let descriptor = Foundation.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, newFileMode)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw StoreError(.restoreRefused, "Cannot create a file in \(database.deletingLastPathComponent().path) for the restored database: \(reason). Nothing was changed. Run the restore as the user that owns the data directory.")
        }
        // The server must be able to open what replaces its database: keep the replaced file's owner (this
        // only succeeds for root or the owner itself, which is all that is needed).
        var replacedInfo = stat()
        if stat(databasePath, &replacedInfo) == 0 {
            _ = fchown(descriptor, replacedInfo.st_uid, replacedInfo.st_gid)
        }
        Foundation.close(descriptor)
        do {
            var readOnly = Configuration()
            readOnly.readonly = true
            let source = try DatabaseQueue(path: backup, configuration: readOnly)
            let copy = try DatabaseQueue(path: temporary)
            try source.backup(to: copy)
            try source.close()
            try copy.close()
            // The copy is what is restored, and only this process writes it: checked again, the file named may have
            // been replaced since it was checked above.
            guard try RestoreSource.check(temporary) == checked else {
                throw StoreError(.restoreRefused, "The backup \(backup) changed while it was being restored. Nothing was changed. Restore it again, from a place only the deployment's operators can write.")
            }

            let restored = try PinStore(path: temporary, allowingUnrestoredBackup: true, clock: clock)
            let note = marker.map { "restored from a backup of \($0.source) taken \($0.takenAt.formatted(.iso8601))" } ?? "restored from \(backup)"
            let (customers, credentials) = try restored.raiseVersionsAfterRestore(
                above: replaced.versions, changeCounter: replaced.changeCounter, signerFloors: replaced.signerFloors,
                breakGlass: replaced.unacknowledgedBreakGlass, transparencyLog: replaced.transparencyLog, administration: replaced.administration,
                changeRequestNumbersGiven: replaced.changeRequestNumbersGiven, force: force, note: note, actor: actor
            )
            try restored.close()

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
            return RestoreReport(customers: customers, marker: marker, replacedDatabase: replaced.state, credentials: credentials)
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
            throw error
        }
    }

    /// In one transaction: carries the replaced database's high-water marks, change counter, revocation floors
    /// (a backup older than a floor must not bring back the signers it revoked), unacknowledged break-glass
    /// records (an edit applied without review stays in sight until someone acknowledges it) and the transparency
    /// log entries appended since the backup (the log never goes back, see `ReplacedTransparencyLog`) over, moves
    /// every customer to its next version (see `ChangeRecorder.nextVersion`) with an audit entry and a log entry,
    /// keeps admin credentials within the replaced database's and carries its later audit entries over (see
    /// `ReplacedAdministration`), and clears the backup mark.
    func raiseVersionsAfterRestore(
        above floors: [String: Int64], changeCounter: Int64, signerFloors: ReplacedDatabaseReader.SignerFloors = .init(),
        breakGlass: [ReplacedDatabaseReader.UnacknowledgedBreakGlass] = [], transparencyLog: ReplacedTransparencyLog? = nil,
        administration: ReplacedAdministration? = nil, changeRequestNumbersGiven: Int64 = 0, force: Bool = false, note: String, actor: String
    ) throws -> (customers: [RestoreReport.Customer], credentials: RestoreReport.Credentials?) {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            // Numbers the replaced database gave after the backup are never given again: an approval by number meant
            // for one of those requests must not apply a new one.
            try db.reserveChangeRequestNumbers(upTo: changeRequestNumbersGiven)
            // First, so that the audit entries carried over come before the restore's own.
            let credentials = try administration?.apply(to: db, now: change.now)
            if let credentials, credentials.changedAnything {
                try change.recordDeploymentChange(.restored, credentials.summary)
            }
            if let transparencyLog {
                try transparencyLog.carry(into: db, force: force)
            }
            for (name, version) in floors where version >= 1 {
                try change.raiseHighWater(name, to: version)
            }
            try db.execute("UPDATE change_counter SET value = \(db.dialect.greatest("value", "?")) WHERE id = 1", [changeCounter])
            if let floor = signerFloors.deploymentDefault {
                try db.execute("""
                    INSERT INTO default_signing_identity (id, signers_not_before, updated_at) VALUES (1, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET signers_not_before = \(db.dialect.greatest("default_signing_identity.signers_not_before", "excluded.signers_not_before")), updated_at = excluded.updated_at
                    """, [floor, change.now])
            }
            for (name, floor) in signerFloors.own {
                // Only where the restored customer still signs with its own identity: the floor belongs to it.
                try db.execute("""
                    UPDATE customer_signing_identity SET signers_not_before = \(db.dialect.greatest("coalesce(signers_not_before, 0)", "?"))
                    WHERE customer_id = (SELECT id FROM customer WHERE name = ?)
                    """, [floor, name])
            }
            for record in breakGlass {
                // A record the backup holds already stays as the backup has it.
                let present = try db.fetchValue(Int64.self, """
                    SELECT count(*) FROM break_glass WHERE customer = ? AND applied_by = ? AND applied_at = ? AND applied_version = ?
                    """, [record.customer, record.appliedBy, record.appliedAt, record.appliedVersion]) ?? 0
                guard present == 0 else { continue }
                // The change request it applied is not in the backup, and its number may belong to another request there:
                // the carried record points at none (0), and the audit log keeps the number it had. It is tied to the
                // restored customer of its name, unless its customer had been removed (then operators alone see it).
                let owner: [any SQLArgument] = record.customerRemoved ? [] : [record.customer]
                try db.execute("""
                    INSERT INTO break_glass (change_request_id, customer, customer_id, applied_by, reason, applied_at, applied_version, request_author)
                    VALUES (0, ?, \(record.customerRemoved ? "NULL" : "(SELECT id FROM customer WHERE name = ?)"), ?, ?, ?, ?, ?)
                    """, [record.customer] + owner + [record.appliedBy, record.reason, record.appliedAt, record.appliedVersion, record.requestAuthor])
                try change.recordDeploymentChange(.restored, "customer \(record.customer): an edit applied without review (change request \(record.changeRequestID) of the replaced database, by \(record.appliedBy), at \(record.appliedAt)) stays unacknowledged after the restore")
            }
            var raised: [RestoreReport.Customer] = []
            let customers = try db.fetchAll("SELECT \(StoredRows.customerColumns) FROM customer ORDER BY name COLLATE \(db.dialect.binaryCollation)") {
                try StoredRows.customerRow($0)
            }
            // Bundles served after the backup was taken may have lacked a next key the backup holds: for the rotation
            // gate, such a key is published anew by the restore, at the restored version.
            try db.execute("UPDATE pin SET published_version = NULL, created_at = ? WHERE next_key = 1", [change.now])
            for customer in customers {
                let version = try change.recordChange(of: customer, .restored, "\(note); version \(customer.version) raised above every version served")
                raised.append(RestoreReport.Customer(name: customer.name, backupVersion: customer.version, version: version))
            }
            try BackupMarker.clear(db)
            return (raised, credentials)
        }
    }
}
