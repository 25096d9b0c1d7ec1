import Foundation
import GRDB
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Apps refuse a version lower than the one they hold, and a changed bundle that repeats one. A restore
/// must therefore move every customer above anything the replaced database served, even when the clock has
/// not moved since.
@Suite struct RestoreTests {
    let acme = try! Sample.customer("acme")
    let api = try! Sample.host("api.example.com")

    /// A database with acme (one host, two pins) and a backup of it in another directory.
    func backedUp() throws -> (fixture: StoreFixture, backups: TemporaryDirectory, backup: String) {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor)
        let backups = try TemporaryDirectory(prefix: "pinset-backups")
        let backup = backups.file("backup.sqlite")
        try fixture.store.backup(to: backup)
        return (fixture, backups, backup)
    }

    @Test func versionsNeverGoDownAcrossBackupAndRestore() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        let atBackup = try #require(try fixture.store.pinSet(for: acme)?.version)
        // After the backup: more edits (apps store these versions), and a customer that is then removed.
        for byte in UInt8(3)...12 {
            try fixture.store.addPins([try Sample.hashPin(byte)], to: api, of: acme, actor: Sample.actor)
        }
        let gone = try Sample.customer("gone")
        try fixture.store.addCustomer(gone, actor: Sample.actor)
        try fixture.store.addHost(api, to: gone, actor: Sample.actor)
        try fixture.store.addHost(try Sample.host("www.example.com"), to: gone, actor: Sample.actor)
        let goneServed = try #require(try fixture.store.pinSet(for: gone)?.version)
        try fixture.store.removeCustomer(gone, actor: Sample.actor)
        let served = try #require(try fixture.store.pinSet(for: acme)?.version)
        #expect(served > atBackup)
        let counter = try fixture.store.changeCounter()
        let backupBytes = try #require(FileManager.default.contents(atPath: backup))
        try fixture.store.pool.close()

        // The clock has not moved: only the replaced database's versions keep the restored ones above.
        let report = try PinStore.restore(backup: backup, over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
        #expect(report.customers.map(\.name) == [acme])
        #expect(report.customers.first?.backupVersion == atBackup)
        #expect(report.replacedDatabase == .read)
        #expect(report.marker?.source == fixture.path)
        #expect(FileManager.default.contents(atPath: backup) == backupBytes)

        let restored = try fixture.openAnother()
        let version = try #require(try restored.pinSet(for: acme)?.version)
        #expect(version > served)
        #expect(report.customers.first?.version == version)
        #expect(try restored.pinSet(for: acme)?.hosts.first?.pins.count == 2)
        #expect(try restored.changeCounter() > counter)
        let entry = try #require(try restored.auditLog(customer: acme, limit: 1).first)
        #expect(entry.action == .restored && entry.actor == "restorer" && entry.version == version)
        #expect(try restored.database.read(BackupMarker.read) == nil)

        // Later edits keep going up; a customer removed after the backup comes back above its old versions.
        try restored.addPins([try Sample.hashPin(99)], to: api, of: acme, actor: Sample.actor)
        #expect(try #require(try restored.pinSet(for: acme)?.version) > version)
        try restored.addCustomer(gone, actor: Sample.actor)
        #expect(try #require(try restored.pinSet(for: gone)?.version) > goneServed)
    }

    /// A backup taken before a signer was revoked must not bring it back: the floors the replaced database
    /// published are carried over, the default identity's and a customer's own.
    @Test func revocationFloorsNeverGoDownAcrossBackupAndRestore() throws {
        let (fixture, backups, _) = try backedUp()
        defer { backups.remove() }
        let own = try Sample.customer("own")
        try fixture.store.addCustomer(own, actor: Sample.actor)
        try fixture.store.setOwnSigningIdentity(of: own, OwnSigningIdentityRecord(keyType: "p256", details: "test"), actor: Sample.actor)
        try fixture.store.backup(to: backups.file("with-own.sqlite"))
        try fixture.store.raiseSignersNotBefore(to: 1_800_000_000, for: nil, details: "test", actor: Sample.actor)
        try fixture.store.raiseSignersNotBefore(to: 1_700_000_000, for: own, details: "test", actor: Sample.actor)
        try fixture.store.pool.close()

        // The backup was taken before either floor was set.
        _ = try PinStore.restore(backup: backups.file("with-own.sqlite"), over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
        let restored = try fixture.openAnother()
        #expect(try restored.pinSet(for: acme)?.signersNotBefore == 1_800_000_000)
        #expect(try restored.pinSet(for: own)?.signersNotBefore == 1_700_000_000)
        #expect(try restored.signersNotBefore(of: nil) == 1_800_000_000)
    }

    /// An edit applied without review after the backup was taken stays unacknowledged after the restore: the
    /// restore takes the pins back, not the duty to look at what was done without a second admin.
    @Test func anUnacknowledgedBreakGlassSurvivesARestoreFromBeforeIt() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        try fixture.store.addAdmin("olga", grants: [AdminGrant(role: .operator, customer: nil)], actor: Sample.actor)
        try fixture.store.setRequiresReview(true, for: acme, actor: Sample.actor)
        let request = try fixture.store.createChangeRequest(for: acme, edits: [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(3)]))],
                                                            reason: "urgent", lifetime: 3600, author: "olga")
        _ = try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "outage",
                                                 approverMay: { account, _ in account.grants.contains { $0.role == .operator } }, authorMay: { _, _ in true })
        let before = try fixture.store.breakGlassEvents()
        #expect(before.count == 1)
        try fixture.store.pool.close()

        _ = try PinStore.restore(backup: backup, over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
        let restored = try fixture.openAnother()
        let after = try restored.breakGlassEvents()
        #expect(after.map(\.reason) == ["outage"] && after.first?.appliedBy == "olga")
        #expect(after.first?.appliedAt == before.first?.appliedAt && after.first?.customerRemoved == false && after.first?.isAcknowledged == false)
        // The request it applied is not in the backup, whose request numbers may name others: it points at none, and
        // the audit log keeps the number it had.
        #expect(after.first?.changeRequestID == 0)
        let carried = try #require(try restored.auditLog(limit: 20).first { $0.details.contains("stays unacknowledged after the restore") })
        #expect(carried.details.contains("change request \(request.id) of the replaced database, by olga"), "\(carried.details)")
        #expect(try restored.pinSet(for: acme)?.hosts.first?.pins.count == 2, "the pins are the backup's")
    }

    /// A backup copied over the database by hand carries its mark: opening it to serve or edit is refused
    /// with the command that fixes it, and that command (restore onto itself) works.
    @Test func aBackupPutInPlaceByHandIsRefusedUntilRestored() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        try fixture.store.addPins([try Sample.hashPin(3)], to: api, of: acme, actor: Sample.actor)
        let served = try #require(try fixture.store.pinSet(for: acme)?.version)
        try fixture.store.pool.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.path + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: fixture.path)

        let error = #expect(throws: StoreError.self) { try fixture.openAnother() }
        #expect(error?.code == .unrestoredBackup)
        #expect(error?.message.contains("pinset store restore \(fixture.path)") == true, "\(error?.message ?? "")")
        // Inspecting it read-only is fine.
        #expect(try PinStore.open(path: fixture.path, readOnly: true).customers().map(\.name) == [acme])

        // The database that served `served` is gone: the clock is what lifts the versions above it.
        fixture.clock.advance(by: 1)
        let report = try PinStore.restore(backup: fixture.path, over: fixture.path, actor: Sample.actor, force: false, clock: fixture.clock.now)
        let version = try #require(report.customers.first?.version)
        #expect(version > served)
        let restored = try fixture.openAnother()
        #expect(try restored.pinSet(for: acme)?.version == version)
    }

    @Test func restoreIsRefusedWhileAnotherConnectionHasTheDatabaseOpen() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        try fixture.store.addCustomer(try Sample.customer("after"), actor: Sample.actor)
        let before = try dump(fixture.store)
        let error = #expect(throws: StoreError.self) {
            try PinStore.restore(backup: backup, over: fixture.path, actor: Sample.actor, force: true, clock: fixture.clock.now)
        }
        #expect(error?.code == .restoreRefused)
        #expect(error?.message.contains("Stop every server") == true, "\(error?.message ?? "")")
        #expect(try dump(fixture.store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.contains("restore") }.isEmpty)
    }

    @Test func anUnreadableDatabaseIsReplacedOnlyWithForce() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        try fixture.store.pool.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.path + suffix) }
        let garbage = [UInt8](repeating: 0x5A, count: 8192)
        try Data(garbage).write(to: URL(fileURLWithPath: fixture.path))

        let error = #expect(throws: StoreError.self) {
            try PinStore.restore(backup: backup, over: fixture.path, actor: Sample.actor, force: false, clock: fixture.clock.now)
        }
        #expect(error?.message.contains("--accept-damaged") == true, "\(error?.message ?? "")")
        #expect(FileManager.default.contents(atPath: fixture.path) == Data(garbage))

        fixture.clock.advance(by: 60)
        let report = try PinStore.restore(backup: backup, over: fixture.path, actor: Sample.actor, force: true, clock: fixture.clock.now)
        guard case .unreadable = report.replacedDatabase else {
            Issue.record("the replaced database was reported as \(report.replacedDatabase)")
            return
        }
        #expect(report.customers.first?.version == StoreFixture.firstVersion + 60_000)
        #expect(try fixture.openAnother().integrityCheck() == ["ok"])
    }

    @Test func aDamagedOrForeignBackupIsRefused() throws {
        let (fixture, backups, _) = try backedUp()
        defer { backups.remove() }
        let foreign = backups.file("foreign.sqlite")
        #expect(try ProcessRunner.run("sqlite3", [foreign, "CREATE TABLE t (x); INSERT INTO t VALUES (1);"]).status == 0)
        let text = try backups.write("notes.txt", "not a database at all, but long enough to be read as one\n")
        let before = try dump(fixture.store)
        try fixture.store.pool.close()
        for candidate in [foreign, text, backups.file("missing.sqlite")] {
            let error = #expect(throws: StoreError.self, "\(candidate)") {
                try PinStore.restore(backup: candidate, over: fixture.path, actor: Sample.actor, force: true, clock: fixture.clock.now)
            }
            #expect(error?.code == .restoreRefused, "\(candidate): \(error?.message ?? "")")
        }
        #expect(try dump(fixture.openAnother()) == before)
    }

    /// The way a PostgreSQL deployment is restored: the backup into a new SQLite file, then `store copy` into an
    /// empty database. Nothing replaced was read, so floors set after the backup were lost and the signers they
    /// revoked signed again. The new file is refused unless the database the servers use is named (its floors
    /// and versions are then carried through the copy) or `force` says it is lost.
    @Test func restoringIntoANewFileCarriesTheServedFloorsThroughTheCopy() throws {
        let served = try StoreFixture(.postgreSQL)
        let acme = try Sample.customer("acme"), own = try Sample.customer("own")
        try served.store.addCustomer(acme, actor: Sample.actor)
        try served.store.addCustomer(own, ownSigningIdentity: OwnSigningIdentityRecord(keyType: "p256", details: "test key"), actor: Sample.actor)
        let backups = try TemporaryDirectory(prefix: "pinset-backups")
        defer { backups.remove() }
        let backup = backups.file("backup.sqlite")
        let stolen = SHA256Fingerprint(of: Array("stolen token".utf8))
        try served.store.addAdmin("mallory", grants: [AdminGrant(role: .operator, customer: nil)], actor: Sample.actor)
        try served.store.addAdminToken(sha256: stolen, of: "mallory", label: "laptop", expiresAt: nil, actor: Sample.actor)
        try served.store.backup(to: backup)
        _ = try served.store.revokeAdminTokens(of: "mallory", label: nil, actor: Sample.actor)
        try served.store.raiseSignersNotBefore(to: 1_800_000_000, for: nil, details: "leak", actor: Sample.actor)
        try served.store.raiseSignersNotBefore(to: 1_700_000_000, for: own, details: "leak", actor: Sample.actor)
        let servedVersion = try #require(try served.store.pinSet(for: acme)?.version)
        let restoredPath = backups.file("restored.sqlite")

        let refused = #expect(throws: StoreError.self) {
            try PinStore.restore(backup: backup, over: restoredPath, actor: "restorer", force: false, clock: served.clock.now)
        }
        #expect(refused?.code == .restoreRefused)
        #expect(refused?.message.contains("--replacing") == true && refused?.message.contains("Nothing was changed") == true, "\(refused?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: restoredPath))

        let report = try PinStore.restore(backup: backup, over: restoredPath, replacing: served.location, actor: "restorer", force: false, clock: served.clock.now)
        #expect(report.replacedDatabase == .read)
        let target = try StoreBackend.postgreSQL.freshLocation(in: backups)
        _ = try PinStore.copy(from: .sqlite(path: restoredPath), to: target)
        let copy = try PinStore.open(target)
        defer { try? copy.close() }
        #expect(try copy.signersNotBefore(of: nil) == 1_800_000_000)
        #expect(try copy.pinSet(for: acme)?.signersNotBefore == 1_800_000_000)
        #expect(try copy.pinSet(for: own)?.signersNotBefore == 1_700_000_000)
        #expect(try #require(try copy.pinSet(for: acme)?.version) > servedVersion)
        #expect(report.credentials?.tokensRevoked == 1)
        #expect(try copy.admin(authenticatedBy: stolen, at: StoreFixture.start) == nil, "a token revoked in the served database stays revoked")

        // A database named with --replacing that cannot be read stops the restore too.
        let unreadable = #expect(throws: StoreError.self) {
            try PinStore.restore(backup: backup, over: backups.file("again.sqlite"), replacing: .sqlite(path: backups.file("missing.sqlite")), actor: "restorer", force: false, clock: served.clock.now)
        }
        #expect(unreadable?.code == .restoreRefused)
        #expect(!FileManager.default.fileExists(atPath: backups.file("again.sqlite")))
    }

    /// A restore brings back pins, not credentials. An operator revokes a stolen token, disables an admin and takes
    /// a role away (disabling olga revoked her token too), then restores yesterday's backup to undo what the token did: none of it comes back, what was
    /// recorded after the backup stays in the audit log, and a token issued after the backup (not in it) is counted
    /// for issuing again rather than restored.
    @Test func aRestoreNeverGivesBackACredentialTakenAwayAfterTheBackup() throws {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        let stolen = SHA256Fingerprint(of: Array("stolen".utf8)), erins = SHA256Fingerprint(of: Array("erin".utf8))
        let olgas = SHA256Fingerprint(of: Array("olga".utf8)), later = SHA256Fingerprint(of: Array("later".utf8))
        try fixture.store.addAdmin("mallory", grants: [AdminGrant(role: .operator, customer: nil)], actor: "root")
        try fixture.store.addAdmin("erin", grants: [AdminGrant(role: .editor, customer: acme), AdminGrant(role: .viewer, customer: acme)], actor: "root")
        try fixture.store.addAdmin("olga", grants: [AdminGrant(role: .operator, customer: nil)], actor: "root")
        try fixture.store.addAdminToken(sha256: stolen, of: "mallory", label: "laptop", expiresAt: nil, actor: "root")
        try fixture.store.addAdminToken(sha256: erins, of: "erin", label: "laptop", expiresAt: nil, actor: "root")
        try fixture.store.addAdminToken(sha256: olgas, of: "olga", label: "laptop", expiresAt: nil, actor: "root")
        let backups = try TemporaryDirectory(prefix: "pinset-backups")
        defer { backups.remove() }
        let backup = backups.file("backup.sqlite")
        try fixture.store.backup(to: backup)

        _ = try fixture.store.revokeAdminTokens(of: "mallory", label: nil, actor: "incident")
        try fixture.store.updateAdmin("erin", grants: [AdminGrant(role: .viewer, customer: acme)], disabled: nil, actor: "incident")
        try fixture.store.updateAdmin("olga", grants: nil, disabled: true, actor: "incident")
        try fixture.store.addAdmin("nina", grants: [AdminGrant(role: .viewer, customer: acme)], actor: "root")
        try fixture.store.addAdminToken(sha256: later, of: "nina", label: "ci", expiresAt: nil, actor: "root")
        let afterBackup = try fixture.store.auditLog(limit: 100).filter { $0.actor == "incident" }
        #expect(afterBackup.count == 3)
        try fixture.store.pool.close()

        let report = try PinStore.restore(backup: backup, over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
        let credentials = try #require(report.credentials)
        #expect(credentials.accountsDisabled == ["olga"])
        #expect(credentials.grantsRemoved == 1 && credentials.tokensRevoked == 2 && credentials.tokensNotCarried == 1, "\(credentials)")
        #expect(credentials.summary.contains("pinset admin token"), "\(credentials.summary)")

        let restored = try fixture.openAnother()
        let now = StoreFixture.start
        #expect(try restored.admin(authenticatedBy: stolen, at: now) == nil)
        #expect(try restored.admin(authenticatedBy: olgas, at: now) == nil)
        #expect(try restored.admin(authenticatedBy: later, at: now) == nil)
        let erin = try #require(try restored.admin(authenticatedBy: erins, at: now))
        #expect(erin.grants == [AdminGrant(role: .viewer, customer: acme)])
        let log = try restored.auditLog(limit: 100)
        #expect(log.filter { $0.actor == "incident" }.map(\.details).sorted() == afterBackup.map(\.details).sorted())
        #expect(log.contains { $0.action == .restored && $0.details.contains("admin olga disabled") })
        // Newest first: the restore's own entries come after the history it carried.
        let carriedAt = try #require(log.firstIndex { $0.actor == "incident" })
        let restoredAt = try #require(log.firstIndex { $0.actor == "restorer" })
        #expect(restoredAt < carriedAt)
    }

    /// With the replaced database lost, nothing says what was revoked since the backup: its credentials are restored
    /// as they are, and the report says so (the command then warns).
    @Test func withTheReplacedDatabaseLostTheBackupsCredentialsAreRestoredAndSaidToBe() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        try fixture.store.pool.close()
        let report = try PinStore.restore(backup: backup, over: backups.file("new.sqlite"), actor: "restorer", force: true, clock: fixture.clock.now)
        #expect(report.replacedDatabase == .absent && report.credentials == nil)
    }

    /// Whoever can write where backups are kept (but not the server) edits one with `sqlite3`: a trigger that undoes
    /// every later token revocation, or a table of their own. The restore refuses it, naming the objects, and changes
    /// nothing.
    @Test func aBackupWithATriggerOrTableOfItsOwnIsRefused() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        let before = try #require(FileManager.default.contents(atPath: fixture.path))
        try fixture.store.pool.close()
        for (name, sql) in [
            ("trigger keep_tokens", "CREATE TRIGGER keep_tokens AFTER UPDATE ON admin_token BEGIN UPDATE admin_token SET revoked_at = NULL; END;"),
            ("table notes", "CREATE TABLE notes (text TEXT);"),
            ("trigger transparency_log_entry_no_delete", """
                DROP TRIGGER transparency_log_entry_no_delete;
                CREATE TRIGGER transparency_log_entry_no_delete BEFORE DELETE ON transparency_log_entry BEGIN SELECT 1; END;
                """),
            ("missing trigger transparency_log_hash_no_update", "DROP TRIGGER transparency_log_hash_no_update;"),
            // A table of the schema, defined otherwise than any version of it (here with a column of someone else's).
            ("table admin_account", "ALTER TABLE admin_account ADD COLUMN note TEXT;"),
            // SQLite keeps the sqlite_ prefix for itself only while the schema is not writable.
            ("trigger sqlite_keep_tokens", """
                PRAGMA writable_schema = ON;
                CREATE TRIGGER sqlite_keep_tokens AFTER UPDATE ON admin_token BEGIN UPDATE admin_token SET revoked_at = NULL; END;
                """),
        ] {
            let crafted = backups.file("crafted.sqlite")
            try? FileManager.default.removeItem(atPath: crafted)
            try FileManager.default.copyItem(atPath: backup, toPath: crafted)
            let edited = try ProcessRunner.run("sqlite3", [crafted, sql])
            try #require(edited.status == 0, "\(edited.stderr)")
            let refused = #expect(throws: StoreError.self) {
                try PinStore.restore(backup: crafted, over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
            }
            #expect(refused?.code == .restoreRefused && refused?.message.contains(name) == true && refused?.message.contains("Nothing was changed") == true,
                    "\(refused?.message ?? "")")
            #expect(FileManager.default.contents(atPath: fixture.path) == before)
        }
        // The genuine backup still restores.
        _ = try PinStore.restore(backup: backup, over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
    }

    /// Reviewers approve by number. A request made after the backup and then removed with its customer (its number
    /// may sit in a reviewer's open page) keeps its number out of reach after a restore, and after a store copy.
    @Test func changeRequestNumbersGivenAfterTheBackupAreNotGivenAgain() throws {
        let (fixture, backups, backup) = try backedUp()
        defer { backups.remove() }
        try fixture.store.addAdmin("alice", grants: [AdminGrant(role: .editor, customer: nil)], actor: "root")
        let gone = try Sample.customer("gone")
        try fixture.store.addCustomer(gone, actor: Sample.actor)
        try fixture.store.addHost(api, to: gone, actor: Sample.actor)
        let edits = [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(9)]))]
        let removed = try fixture.store.createChangeRequest(for: gone, edits: edits, reason: "renewal", lifetime: 3600, author: "alice")
        try fixture.store.removeCustomer(gone, actor: Sample.actor)
        try fixture.store.pool.close()

        _ = try PinStore.restore(backup: backup, over: fixture.path, actor: "restorer", force: false, clock: fixture.clock.now)
        let restored = try fixture.openAnother()
        try restored.addAdmin("alice", grants: [AdminGrant(role: .editor, customer: nil)], actor: "root")
        let afterRestore = try restored.createChangeRequest(
            for: acme, edits: [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(10)]))], reason: "renewal", lifetime: 3600, author: "alice")
        #expect(afterRestore.id > removed.id)

        // That request goes too (its customer removed), so the copy's source holds no request of that number.
        let other = try Sample.customer("other")
        try restored.addCustomer(other, actor: Sample.actor)
        try restored.addHost(api, to: other, actor: Sample.actor)
        try restored.removeCustomer(acme, actor: Sample.actor)
        for backend in StoreBackend.allCases {
            let target = try backend.freshLocation(in: backups)
            _ = try PinStore.copy(from: fixture.location, to: target)
            let copy = try PinStore.open(target)
            defer { try? copy.close() }
            let afterCopy = try copy.createChangeRequest(
                for: other, edits: [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(11)]))], reason: "renewal", lifetime: 3600, author: "alice")
            #expect(afterCopy.id > afterRestore.id, "\(backend)")
        }
    }

    /// A backup taken by an earlier release holds that release's schema (tables as they were before later columns, no
    /// transparency log): it is no foreign object, and restores, migrated to the current schema.
    @Test(arguments: ["0002_backup_marker", "0004_legacy_clients", "0011_break_glass", "0014_pin_windows", "0016_change_request_numbers"])
    func aBackupOfAnEarlierSchemaRestores(before identifier: String) throws {
        let fixture = try StoreFixture()
        try fixture.store.pool.close()
        let old = fixture.directory.file("old-\(identifier).sqlite")
        let queue = try StoreFixture.database(at: old, migratedBefore: identifier)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO customer (name, version, created_at, updated_at) VALUES ('globex', 5, '2027-01-15 08:00:00.000', '2027-01-15 08:00:00.000')")
        }
        try queue.close()
        #expect(try RestoreSource.check(old).auditEnd == nil)
        // Into a new file, as for a deployment whose database is lost: only the backup itself is judged.
        let report = try PinStore.restore(backup: old, over: fixture.directory.file("restored.sqlite"), actor: "restorer", force: true, clock: fixture.clock.now)
        #expect(report.customers.map(\.name.rawValue) == ["globex"])
    }
}
