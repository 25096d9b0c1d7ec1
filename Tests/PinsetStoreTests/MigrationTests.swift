import Foundation
import PinsetCore
import PinsetMigrations
@testable import PinsetStore
import GRDB
import PinsetTestSupport
import Testing

@Suite struct MigrationTests {
    @Test func migrationsAreRecordedAndNotReappliedOnReopen() throws {
        let fixture = try StoreFixture()
        #expect(try fixture.store.appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        let before = try dump(fixture.store)

        let reopened = try fixture.openAnother()
        #expect(try reopened.appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
        #expect(try dump(reopened) == before)
    }

    /// Every file in Migrations/sql must be registered, in file-name order, with the embedded text equal to
    /// the file: a file that is added but not registered would silently never run.
    @Test func everySQLFileIsEmbeddedAndRegisteredInOrder() throws {
        let directory = SourceTree.path("Migrations/sql")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(SchemaMigrations.sqlite.map { $0.identifier + ".sql" } == files)
        for migration in SchemaMigrations.sqlite {
            let text = try String(contentsOfFile: "\(directory)/\(migration.identifier).sql", encoding: .utf8)
            #expect(migration.sql == text)
        }
    }

    /// Duplicate report keys (a database edited by hand) do not stop the unique key of 0008: the upgrade folds
    /// those rows into one with their sum instead of failing.
    @Test func duplicateReportRowsFromBeforeTheUniqueKeyAreFoldedOnUpgrade() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-store")
        defer { directory.remove() }
        let path = directory.file("old.sqlite")
        let queue = try StoreFixture.database(at: path, migratedBefore: "0008_report_bounds")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO customer (name, version, created_at, updated_at) VALUES ('acme', 1, 'x', 'x')")
            let insert = """
                INSERT INTO pin_failure_report_hour (customer_id, hour, hostname, validation_result, leaf_spki_sha256, pinset_version, app_version, reports)
                VALUES (1, 3600, 'api.example.com', 1, ?, ?, '1.0', ?)
                """
            try db.execute(sql: insert, arguments: [nil, nil, 2])
            try db.execute(sql: insert, arguments: [nil, nil, 3])
            try db.execute(sql: insert, arguments: [nil, 7, 4])
            try db.execute(sql: insert, arguments: [nil, 7, 5])
            try db.execute(sql: insert, arguments: [String(repeating: "A", count: 43) + "=", nil, 6])
        }
        try queue.close()

        let store = try PinStore(path: path)
        #expect(try store.appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
        let counts = try store.pinFailureCounts(since: 0).filter { $0.key.hostname == "api.example.com" }
        #expect(counts.map(\.reports).sorted() == [5, 6, 9])
        #expect(counts.map(\.reports).reduce(0, +) == 20)
    }

    /// 0016 gives change requests AUTOINCREMENT on a database that holds some: they keep their numbers, and the next
    /// number follows every number given before, a removed request's that a break-glass record names included.
    @Test func changeRequestNumbersGivenBeforeTheUpgradeAreNeverGivenAgain() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-store")
        defer { directory.remove() }
        let path = directory.file("old.sqlite")
        let queue = try StoreFixture.database(at: path, migratedBefore: "0016_change_request_numbers")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO customer (name, version, created_at, updated_at) VALUES ('acme', 1, '2027-01-15 08:00:00.000', '2027-01-15 08:00:00.000')")
            for id in [1, 2] {
                try db.execute(sql: """
                    INSERT INTO change_request (id, customer_id, author, reason, operations, base_version, created_at, expires_at, state)
                    VALUES (?, 1, 'alice', 'renewal', '[]', 1, '2027-01-15 08:00:00.000', '2099-01-01 00:00:00.000', 'open')
                    """, arguments: [id])
            }
            try db.execute(sql: """
                INSERT INTO break_glass (change_request_id, customer, customer_id, applied_by, reason, applied_at, applied_version)
                VALUES (7, 'gone', NULL, 'olga', 'outage', 'x', 1)
                """)
        }
        try queue.close()

        let store = try PinStore(path: path)
        #expect(try store.appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
        #expect(try store.changeRequest(2)?.reason == "renewal", "the requests keep their numbers")
        try store.addAdmin("alice", grants: [AdminGrant(role: .editor, customer: nil)], actor: "root")
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addHost(api, to: acme, actor: "root")
        let next = try store.createChangeRequest(
            for: acme, edits: [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(1)]))], reason: "next", lifetime: 3600, author: "alice")
        #expect(next.id == 8)
    }

    @Test func aDatabaseFromANewerProgramIsRefused() throws {
        let fixture = try StoreFixture()
        try fixture.store.pool.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_the_future')")
        }
        let error = #expect(throws: StoreError.self) { try fixture.openAnother() }
        #expect(error?.code == .databaseTooNew)
        #expect(error?.message.contains("9999_from_the_future") == true)
    }

    @Test func readOnlyStoreReadsButDoesNotWriteOrMigrate() throws {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        let reader = try PinStore.open(path: fixture.path, readOnly: true)
        #expect(try reader.customers().map(\.name.rawValue) == ["acme"])
        #expect(throws: (any Error).self) { try reader.addCustomer(try Sample.customer("other"), actor: Sample.actor) }
        #expect(try fixture.store.customers().count == 1)

        let emptyPath = fixture.directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: emptyPath, contents: nil))
        let error = #expect(throws: StoreError.self) { try PinStore.open(path: emptyPath, readOnly: true) }
        #expect(error?.code == .databaseNotMigrated)
    }

    @Test func foreignKeysAreEnforced() throws {
        let fixture = try StoreFixture()
        #expect(throws: (any Error).self) {
            try fixture.store.pool.write { db in
                try db.execute(sql: "INSERT INTO host (customer_id, hostname, port, include_subdomains, created_at) VALUES (12345, 'x.example.com', 443, 0, 'now')")
            }
        }
        #expect(try fixture.store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
    }
}
