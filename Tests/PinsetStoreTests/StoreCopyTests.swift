import Foundation
import GRDB
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// `pinset store copy`, backups of a PostgreSQL store, and the list of tables both rely on.
@Suite struct StoreCopyTests {
    /// A deployment with every kind of row: hosts, pins of each form, an own signing identity with a floor, a
    /// default floor, a removed customer's high-water mark and audit history.
    func populate(_ store: PinStore) throws {
        let acme = try Sample.customer("acme"), own = try Sample.customer("own"), gone = try Sample.customer("gone")
        try store.addCustomer(acme, servesLegacyClients: false, actor: Sample.actor)
        try store.addHost(try Sample.host("API.example.com"), pins: try Sample.certificateChainPins() + [try Sample.publicKeyPin()], to: acme, actor: Sample.actor)
        try store.addHost(try Sample.host("cdn.example.com"), includeSubdomains: true, pins: [try Sample.hashPin(7, label: "backup")], to: acme, actor: Sample.actor)
        try store.setUnmonitored(try Sample.host("cdn.example.com"), of: acme, reason: "internal network", actor: Sample.actor)
        try store.addCustomer(own, ownSigningIdentity: OwnSigningIdentityRecord(keyType: "p256", details: "test key"), actor: Sample.actor)
        try store.raiseSignersNotBefore(to: 1_700_000_000, for: own, details: "leak", actor: Sample.actor)
        try store.raiseSignersNotBefore(to: 1_600_000_000, for: nil, details: "rotation", actor: Sample.actor)
        try store.addCustomer(gone, actor: Sample.actor)
        try store.removeCustomer(gone, actor: Sample.actor)
    }

    @Test(arguments: [(StoreBackend.sqlite, StoreBackend.postgreSQL), (.postgreSQL, .sqlite)])
    func aCopyHasEveryRowVersionAndAuditEntry(from source: StoreBackend, to target: StoreBackend) throws {
        let original = try StoreFixture(source)
        try populate(original.store)
        let directory = try TemporaryDirectory(prefix: "pinset-copy")
        defer { directory.remove() }
        let targetLocation = try target.freshLocation(in: directory)

        let report = try PinStore.copy(from: original.location, to: targetLocation)
        let copy = try PinStore.open(targetLocation)
        defer { try? copy.close() }
        #expect(try dump(copy) == dump(original.store))
        #expect(try copy.allPinSets() == original.store.allPinSets())
        #expect(try copy.auditLog(limit: 1000) == original.store.auditLog(limit: 1000))
        #expect(try copy.changeCounter() == original.store.changeCounter())
        #expect(report.customers.map(\.version) == (try original.store.customers().map(\.version)))
        #expect(report.rows["audit_log"] == (try original.store.auditLog(limit: 1000).count))

        // The copy goes on where the original left off: new ids, versions above every old one, re-adds too.
        let acme = try Sample.customer("acme")
        let before = try #require(try copy.pinSet(for: acme)?.version)
        try copy.addHost(try Sample.host("new.example.com"), pins: [try Sample.hashPin(9)], to: acme, actor: Sample.actor)
        #expect(try copy.pinSet(for: acme)!.version > before)
        let goneHighWater = try #require(try original.store.auditLog(customer: try Sample.customer("gone"), limit: 10).map(\.version).max())
        try copy.addCustomer(try Sample.customer("gone"), actor: Sample.actor)
        #expect(try copy.pinSet(for: try Sample.customer("gone"))!.version > goneHighWater)
        #expect(try copy.auditLog(limit: 1).first!.id > (try original.store.auditLog(limit: 1).first!.id))
    }

    @Test(arguments: StoreBackend.allCases)
    func aCopyIntoADatabaseWithDataIsRefusedAndWritesNothing(_ backend: StoreBackend) throws {
        let source = try StoreFixture(.sqlite)
        try populate(source.store)
        let target = try StoreFixture(backend)
        try target.store.addCustomer(try Sample.customer("existing"), actor: Sample.actor)
        let before = try dump(target.store)
        let error = #expect(throws: StoreError.self) { try PinStore.copy(from: source.location, to: target.location) }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains("already holds Pinset data") == true)
        #expect(try dump(target.store) == before)
    }

    @Test func aCopyOntoItselfIsRefused() throws {
        let fixture = try StoreFixture(.sqlite)
        #expect(throws: StoreError(.invalidInput, "")) { try PinStore.copy(from: fixture.location, to: fixture.location) }
    }

    /// A backup of a PostgreSQL store is a marked SQLite file that `restore` accepts.
    @Test func aPostgreSQLStoreBacksUpToAMarkedSQLiteFile() throws {
        let fixture = try StoreFixture(.postgreSQL)
        try populate(fixture.store)
        let directory = try TemporaryDirectory(prefix: "pinset-backup")
        defer { directory.remove() }
        let target = directory.file("backup.sqlite")
        try fixture.store.backup(to: target)

        let copy = try PinStore.open(path: target, readOnly: true)
        #expect(try copy.integrityCheck() == ["ok"])
        #expect(try copy.allPinSets() == fixture.store.allPinSets())
        #expect(try dump(copy, excluding: ["backup_marker"]) == dump(fixture.store, excluding: ["backup_marker"]))
        let marker = try #require(try copy.database.read(BackupMarker.read))
        #expect(marker.source == fixture.location.description)
        #expect(throws: StoreError(.unrestoredBackup, "")) { try PinStore.open(path: target) }
    }

    /// The copier and the dump name every table the schema has: a table added by a migration but not here
    /// would be silently left out of copies and backups.
    @Test(arguments: StoreBackend.allCases)
    func theCopierCoversEveryTableOfTheSchema(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let tables: Set<String> = try fixture.store.database.read { db in
            let sql = backend == .sqlite
                ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'"
                : "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'pinset_migrations'"
            return Set(try db.fetchAll(sql) { try $0.decode(String.self, atIndex: 0) })
        }
        #expect(tables == Set(StoreCopier.tables.map(\.name) + ["change_counter"] + StoreCopier.runtimeTables))
        for table in StoreCopier.tables {
            let columns: Set<String> = try fixture.store.database.read { db in
                let sql = backend == .sqlite
                    ? "SELECT name FROM pragma_table_info('\(table.name)')"
                    : "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '\(table.name)'"
                return Set(try db.fetchAll(sql) { try $0.decode(String.self, atIndex: 0) })
            }
            #expect(columns == Set(table.columns), "\(table.name)")
        }
    }
}


/// The backup docs/operations.md gives for PostgreSQL: pg_dump, and pg_restore into an empty database.
@Suite struct PostgresDumpTests {
    @Test func aPgDumpRestoredIntoAnEmptyDatabaseIsTheSameStoreAndGoesOn() throws {
        let server = try SharedTestPostgres.server()
        let fixture = try StoreFixture(.postgreSQL)
        try StoreCopyTests().populate(fixture.store)
        guard case .postgreSQL(let source) = fixture.location else { return }
        let dumpFile = fixture.directory.file("pinset.dump")
        let dumped = try ProcessRunner.run("\(TestPostgresServer.binDirectory)/pg_dump", [
            "--format=custom", "--file", dumpFile, "-h", "127.0.0.1", "-p", String(server.port), "-U", TestPostgresServer.user, source.database,
        ], environment: server.environment, timeout: 120)
        #expect(dumped.status == 0, "\(dumped.combined)")

        let targetURL = try SharedTestPostgres.freshDatabase()
        let target = try PostgresLocation(url: targetURL, environment: server.environment)
        let restored = try ProcessRunner.run("\(TestPostgresServer.binDirectory)/pg_restore", [
            "--exit-on-error", "--no-owner", "-h", "127.0.0.1", "-p", String(server.port), "-U", TestPostgresServer.user, "-d", target.database, dumpFile,
        ], environment: server.environment, timeout: 120)
        #expect(restored.status == 0, "\(restored.combined)")

        let copy = try PinStore.open(.postgreSQL(target))
        defer { try? copy.close() }
        #expect(try dump(copy) == dump(fixture.store))
        #expect(try copy.allPinSets() == fixture.store.allPinSets())
        let acme = try Sample.customer("acme")
        let before = try #require(try copy.pinSet(for: acme)?.version)
        try copy.addHost(try Sample.host("new.example.com"), pins: [try Sample.hashPin(9)], to: acme, actor: Sample.actor)
        #expect(try copy.pinSet(for: acme)!.version > before)
    }
}
