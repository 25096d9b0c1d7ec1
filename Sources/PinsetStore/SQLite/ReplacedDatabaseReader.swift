import Foundation
import GRDB

/// Reads what the database about to be replaced served, and makes sure no other process is using it.
enum ReplacedDatabaseReader {
    struct Result {
        /// The highest version recorded per customer name (lower-cased), from customers, high-water marks
        /// and the audit log.
        var versions: [String: Int64]
        var changeCounter: Int64
        var state: RestoreReport.ReplacedDatabase
        /// The revocation floors it published, which a restore must not lower.
        var signerFloors = SignerFloors()
        /// Edits applied without review that nobody had acknowledged: a backup taken before them must not make
        /// them disappear unseen.
        var unacknowledgedBreakGlass: [UnacknowledgedBreakGlass] = []
        /// Its transparency log, which the restored log must continue; `nil` when it has none.
        var transparencyLog: ReplacedTransparencyLog?
        /// Its admins, grants, tokens and recent audit entries; `nil` when it could not be read or there was none.
        var administration: ReplacedAdministration?
        /// The highest change-request number it gave (see `SQLDialect.changeRequestNumbersGiven`).
        var changeRequestNumbersGiven: Int64 = 0
    }

    /// A break-glass record as stored (dates in their stored text form, the same on both backends).
    struct UnacknowledgedBreakGlass: Hashable {
        var changeRequestID: Int64
        var customer: String
        var appliedBy: String
        var reason: String
        var appliedAt: String
        var appliedVersion: Int64
        /// Its customer was removed before the restore: it stays for operators only.
        var customerRemoved: Bool
        /// Who wrote the request it applied, who may not acknowledge it either (nil in databases from before it was kept).
        var requestAuthor: String?

        /// The query, for a database whose `break_glass` has the `request_author` column or not.
        static func select(withRequestAuthor: Bool) -> String {
            """
            SELECT change_request_id, customer, applied_by, reason, applied_at, applied_version, customer_id IS NULL, \(withRequestAuthor ? "request_author" : "NULL")
            FROM break_glass WHERE acknowledged_at IS NULL ORDER BY id
            """
        }
    }

    /// Revocation floors: the default identity's, and those of customers' own identities by lower-cased name.
    struct SignerFloors {
        var deploymentDefault: Int64?
        var own: [String: Int64] = [:]
    }

    /// `auditSince`: where the backup's audit log ends, from which this database's entries are read.
    static func read(_ path: String, force: Bool, auditSince: ReplacedAdministration.AuditEnd?) throws -> Result {
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
                var result = Result(versions: versions, changeCounter: counter, state: .read, signerFloors: try signerFloors(db))
                // Absent from databases created before break-glass existed.
                if try db.tableExists("break_glass") {
                    let withRequestAuthor = try db.columns(in: "break_glass").contains { $0.name == "request_author" }
                    result.unacknowledgedBreakGlass = try Row.fetchAll(db, sql: UnacknowledgedBreakGlass.select(withRequestAuthor: withRequestAuthor)).map { row in
                        UnacknowledgedBreakGlass(
                            changeRequestID: row[0], customer: row[1], appliedBy: row[2], reason: row[3], appliedAt: row[4], appliedVersion: row[5], customerRemoved: row[6],
                            requestAuthor: row[7]
                        )
                    }
                }
                result.transparencyLog = try ReplacedTransparencyLog.read(db, path: path)
                result.administration = try ReplacedAdministration.read(SQLiteConnection(db: db), withAdmins: try db.tableExists("admin_token"), auditSince: auditSince)
                if try db.tableExists("break_glass") {
                    result.changeRequestNumbersGiven = try Int64.fetchOne(db, sql: SQLDialect.sqlite.changeRequestNumbersGiven) ?? 0
                }
                return result
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw inUse(path)
        } catch let error as StoreError {
            throw error
        } catch {
            guard force else {
                throw StoreError(.restoreRefused, "Cannot read the current database \(path) (\(error)), so the versions it served are unknown. Nothing was changed. If it is damaged, run the restore again with --accept-damaged: versions are then raised to the current time in milliseconds, which is above anything served unless this machine's clock was behind the one that served them.")
            }
            return Result(versions: [:], changeCounter: 0, state: .unreadable(reason: "\(error)"))
        }
    }

    /// Absent from databases created before revocation floors existed.
    static func signerFloors(_ db: Database) throws -> SignerFloors {
        var floors = SignerFloors()
        if try db.tableExists("default_signing_identity") {
            floors.deploymentDefault = try Int64.fetchOne(db, sql: "SELECT signers_not_before FROM default_signing_identity WHERE id = 1")
        }
        if try db.tableExists("customer_signing_identity"), try db.columns(in: "customer_signing_identity").contains(where: { $0.name == "signers_not_before" }) {
            let rows = try Row.fetchCursor(db, sql: """
                SELECT customer.name, customer_signing_identity.signers_not_before FROM customer_signing_identity
                JOIN customer ON customer.id = customer_signing_identity.customer_id
                WHERE customer_signing_identity.signers_not_before IS NOT NULL
                """)
            while let row = try rows.next() {
                floors.own[(try row.decode(atIndex: 0) as String).lowercased()] = try row.decode(atIndex: 1)
            }
        }
        return floors
    }

    /// What the database the servers use served, when the restore writes a new file instead of replacing that
    /// database's own (a PostgreSQL deployment is restored into a SQLite file, then copied into PostgreSQL).
    /// Read through the store interface, so it is any backend, with the current schema.
    static func read(servedBy location: StoreLocation, auditSince: ReplacedAdministration.AuditEnd?) throws -> Result {
        do {
            let store = try PinStore(location: location, readOnly: true)
            defer { try? store.close() }
            return try store.database.read { db in
                var versions: [String: Int64] = [:]
                try db.forEachRow("""
                    SELECT name, version FROM customer
                    UNION ALL SELECT name, version FROM customer_version_high_water
                    UNION ALL SELECT customer, version FROM audit_log
                    """, []) { row in
                    let name = (try row.decode(String.self, atIndex: 0)).lowercased()
                    versions[name] = max(versions[name] ?? 0, try row.decode(Int64.self, atIndex: 1))
                }
                var floors = SignerFloors()
                floors.deploymentDefault = try db.fetchValue(Int64.self, "SELECT signers_not_before FROM default_signing_identity WHERE id = 1")
                try db.forEachRow("""
                    SELECT customer.name, customer_signing_identity.signers_not_before FROM customer_signing_identity
                    JOIN customer ON customer.id = customer_signing_identity.customer_id
                    WHERE customer_signing_identity.signers_not_before IS NOT NULL
                    """, []) { row in
                    floors.own[(try row.decode(String.self, atIndex: 0)).lowercased()] = try row.decode(Int64.self, atIndex: 1)
                }
                let counter = try db.fetchValue(Int64.self, "SELECT value FROM change_counter WHERE id = 1") ?? 0
                var breakGlass: [UnacknowledgedBreakGlass] = []
                try db.forEachRow(UnacknowledgedBreakGlass.select(withRequestAuthor: true), []) { row in
                    breakGlass.append(UnacknowledgedBreakGlass(
                        changeRequestID: try row.decode(atIndex: 0), customer: try row.decode(atIndex: 1), appliedBy: try row.decode(atIndex: 2),
                        reason: try row.decode(atIndex: 3), appliedAt: try row.decode(atIndex: 4), appliedVersion: try row.decode(atIndex: 5),
                        customerRemoved: try row.decode(atIndex: 6), requestAuthor: try row.decode(atIndex: 7)
                    ))
                }
                let logSize = try TransparencyLogAppender.storedSize(db)
                return Result(
                    versions: versions, changeCounter: counter, state: .read, signerFloors: floors, unacknowledgedBreakGlass: breakGlass,
                    transparencyLog: logSize > 0 ? ReplacedTransparencyLog(size: logSize, source: .store(location)) : nil,
                    administration: try ReplacedAdministration.read(db, withAdmins: true, auditSince: auditSince),
                    changeRequestNumbersGiven: try db.fetchValue(Int64.self, db.dialect.changeRequestNumbersGiven) ?? 0
                )
            }
        } catch let error as StoreError {
            throw StoreError(.restoreRefused, "Cannot read the database \(location) that the restore replaces: \(error.message) Nothing was changed. Give --replacing the database the servers use now, and check that it can be reached.")
        } catch {
            throw StoreError(.restoreRefused, "Cannot read the database \(location) that the restore replaces: \(error). Nothing was changed. Give --replacing the database the servers use now, and check that it can be reached.")
        }
    }

    static func inUse(_ path: String) -> StoreError {
        StoreError(.restoreRefused, "The database \(path) is open in another process, most likely a running 'pinset serve'. Nothing was changed. Stop every server and command using it, then run the restore again.")
    }
}

extension ReplacedDatabaseReader.Result {
    /// Both databases' marks, the higher of each: the restored one must stay above everything either served.
    mutating func include(_ other: Self) {
        versions.merge(other.versions, uniquingKeysWith: max)
        changeCounter = max(changeCounter, other.changeCounter)
        if other.state == .read { state = .read }
        if let floor = other.signerFloors.deploymentDefault {
            signerFloors.deploymentDefault = max(signerFloors.deploymentDefault ?? floor, floor)
        }
        signerFloors.own.merge(other.signerFloors.own, uniquingKeysWith: max)
        unacknowledgedBreakGlass += other.unacknowledgedBreakGlass.filter { !unacknowledgedBreakGlass.contains($0) }
        // The longer log is the one checkpoints may have been served from; the restore checks that the backup's
        // log is a prefix of it.
        if let log = other.transparencyLog, log.size > transparencyLog?.size ?? 0 {
            transparencyLog = log
        }
        changeRequestNumbersGiven = max(changeRequestNumbersGiven, other.changeRequestNumbersGiven)
        if let theirs = other.administration {
            if administration == nil {
                administration = theirs
            } else {
                administration?.include(theirs)
            }
        }
    }
}
