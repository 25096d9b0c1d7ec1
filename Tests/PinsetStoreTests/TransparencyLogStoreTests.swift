import Foundation
import GRDB
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import PinsetTransparency
import Testing

/// The transparency log kept in the store: every content version appended with its edit, never forked, never
/// rewritten, carried whole by copies, backups and restores, and read back as proofs a verifier accepts.
///
/// Roots are recomputed here from the entries' bytes alone (as a monitor reading entry bundles would), never
/// taken from the store's stored hashes, so a store that stored the wrong hashes fails these tests.
@Suite struct TransparencyLogStoreTests {
    /// Every entry, in order, with the root a monitor computes from them.
    struct MonitorView {
        var entries: [[UInt8]]
        var decoded: [PinSetLogEntry]

        init(_ store: PinStore) throws {
            let size = try store.transparencyLogSize()
            let records = try store.logEntries(0..<size)
            #expect(records.map(\.index) == Array(0..<size))
            entries = records.map(\.leafData)
            decoded = try entries.map { try PinSetLogEntry(encoded: $0) }
        }

        func root(ofSize size: Int) -> MerkleHash {
            TreeHasher.treeHash(ofEntries: Array(entries[0..<size]))
        }

        var keys: [String] { decoded.map { "\($0.customer.rawValue.lowercased()) \($0.version)" } }
    }

    /// Each customer's current version is logged with exactly the content its bundles publish, and the store's
    /// tree head is the root of the entries.
    static func expectCurrentContentLogged(_ store: PinStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let view = try MonitorView(store)
        for pinSet in try store.allPinSets() {
            let index = try #require(try store.logIndex(of: pinSet.customer, version: pinSet.version), sourceLocation: sourceLocation)
            #expect(view.decoded[Int(index)] == (try PinSetLogEntry(pinSet: pinSet)), sourceLocation: sourceLocation)
        }
        #expect(Set(view.keys).count == view.keys.count, "an entry is logged twice", sourceLocation: sourceLocation)
        #expect(try store.transparencyTreeHead() == TreeHead(size: UInt64(view.entries.count), rootHash: view.root(ofSize: view.entries.count)),
                sourceLocation: sourceLocation)
    }

    @Test(arguments: StoreBackend.allCases)
    func everyNewContentVersionIsLoggedWithThePublishedContent(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let zeta = try Sample.customer("zeta")
        #expect(try store.transparencyTreeHead() == TreeHead(size: 0, rootHash: TreeHasher.emptyTreeHash))

        try store.addCustomer(zeta, actor: Sample.actor)
        try Self.expectCurrentContentLogged(store)
        try store.addHost(try Sample.host("API.example.com"), pins: [try Sample.hashPin(1), try Sample.hashPin(2)], to: zeta, actor: Sample.actor)
        try Self.expectCurrentContentLogged(store)
        try store.addHost(try Sample.host("example.com"), includeSubdomains: true, pins: [try Sample.hashPin(3)], to: zeta, actor: Sample.actor)
        try store.addHost(try Sample.host("pending.example.com"), to: zeta, actor: Sample.actor)
        try Self.expectCurrentContentLogged(store)
        try store.addPins([try Sample.hashPin(4)], to: try Sample.host("api.example.com"), of: zeta, actor: Sample.actor)
        try store.removePin(try SHA256Fingerprint(bytes: [UInt8](repeating: 1, count: 32)), from: try Sample.host("api.example.com"), of: zeta, actor: Sample.actor)
        try store.updateHost(try Sample.host("example.com"), of: zeta, includeSubdomains: false, actor: Sample.actor)
        try Self.expectCurrentContentLogged(store)
        try StoreCopyTests().populate(store)
        try Self.expectCurrentContentLogged(store)

        // One entry per version a customer was given: the audit log names each (a setting change repeats the
        // current version; a removal is recorded at version 0).
        let given = Set(try store.auditLog(limit: 10_000).filter { $0.version > 0 }.map { "\($0.customer.lowercased()) \($0.version)" })
        let view = try MonitorView(store)
        #expect(view.keys.count == given.count)
        #expect(Set(view.keys) == given)
        // In the order the versions were given.
        let zetaVersions = view.decoded.filter { $0.customer == zeta }.map(\.version)
        #expect(zetaVersions == zetaVersions.sorted())
        // Seven edits, and the default signer's revocation floor raised by `populate`.
        #expect(zetaVersions.count == 8)
    }

    /// Removing a customer removes none of its entries; the customer added again under the name appends on.
    @Test(arguments: StoreBackend.allCases)
    func aCustomerRemovedAndAddedAgainKeepsAppending(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(try Sample.host("api.example.com"), pins: [try Sample.hashPin(1)], to: acme, actor: Sample.actor)
        let firstVersion = try #require(try store.pinSet(for: acme)).version
        let before = try store.transparencyTreeHead()

        try store.removeCustomer(acme, actor: Sample.actor)
        #expect(try store.transparencyTreeHead() == before)
        #expect(try store.logIndex(of: acme, version: firstVersion) == 1)

        try store.addCustomer(try Sample.customer("ACME"), actor: Sample.actor)
        let again = try #require(try store.pinSet(for: acme))
        #expect(again.version > firstVersion)
        #expect(try store.logIndex(of: acme, version: again.version) == 2)
        #expect(try store.logIndex(of: acme, version: firstVersion) == 1)
        let view = try MonitorView(store)
        #expect(view.decoded.map(\.customer.rawValue) == ["acme", "acme", "ACME"])
        try ConsistencyProof.generate(oldSize: before.size, newSize: 3, from: store.transparencyHashReader)
            .verify(oldRoot: before.rootHash, newRoot: view.root(ofSize: 3))
    }

    /// An edit that fails after its entry was appended takes the entry with it: the log never holds a version
    /// that was not committed.
    @Test(arguments: StoreBackend.allCases)
    func aRolledBackEditLeavesNoEntry(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        let before = try store.transparencyTreeHead()

        // The import logs "fresh" first, then finds that "acme" exists: the whole transaction rolls back.
        let imports = try ["fresh", "acme"].map {
            CustomerImport(name: try Sample.customer($0), hosts: [], ownSigningIdentity: nil, origin: "test")
        }
        #expect(throws: StoreError(.customerExists, "")) { try store.importCustomers(imports, actor: Sample.actor) }
        #expect(try store.transparencyTreeHead() == before)

        // A write that fails after recording a new version, inside the store.
        struct Interrupted: Error {}
        #expect(throws: Interrupted.self) {
            try store.database.write { db in
                let change = try ChangeRecorder(db, actor: Sample.actor, now: fixture.clock.now())
                try change.recordChange(of: try change.customer(acme), .hostAdded, "interrupted")
                #expect(try TransparencyLogAppender.storedSize(db) == before.size + 1)
                throw Interrupted()
            }
        }
        #expect(try store.transparencyTreeHead() == before)
        #expect(try store.logIndex(of: acme, version: try #require(try store.pinSet(for: acme)).version) == 0)
        try store.addHost(try Sample.host("api.example.com"), pins: [try Sample.hashPin(1)], to: acme, actor: Sample.actor)
        #expect(try store.transparencyLogSize() == before.size + 1)
    }

    /// Two instances on one database edit at the same time: the log is one sequence with no gap and no index used
    /// twice, every version of both is in it once, and the stored hashes are the entries' tree.
    @Test(arguments: StoreBackend.allCases)
    func twoStoresAppendingAtOnceNeverForkTheLog(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let stores = [fixture.store, try fixture.openAnother()]
        defer { try? stores[1].close() }
        let editsPerStore = 30
        let failures = LockedValue<[String]>([])
        DispatchQueue.concurrentPerform(iterations: stores.count) { writer in
            do {
                let customer = try Sample.customer("writer\(writer)")
                try stores[writer].addCustomer(customer, actor: Sample.actor)
                for edit in 1..<editsPerStore {
                    try stores[writer].addHost(try Sample.host("h\(edit).writer\(writer).example.com"), pins: [try Sample.hashPin(UInt8(edit))],
                                               to: customer, actor: Sample.actor)
                }
            } catch {
                failures.withLock { $0.append("writer \(writer): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])

        for store in stores {
            let view = try MonitorView(store)
            #expect(view.entries.count == stores.count * editsPerStore)
            #expect(Set(view.keys).count == view.entries.count)
            for writer in 0..<stores.count {
                let versions = view.decoded.filter { $0.customer.rawValue == "writer\(writer)" }.map(\.version)
                #expect(versions.count == editsPerStore)
                #expect(versions == versions.sorted())
            }
            #expect(try store.transparencyTreeHead() == TreeHead(size: UInt64(view.entries.count), rootHash: view.root(ofSize: view.entries.count)))
            try Self.expectCurrentContentLogged(store)
        }
    }

    /// Proofs and tiles read from the store, at sizes on both sides of the first 256-entry tile, verify against roots
    /// computed from the entries alone.
    @Test(arguments: StoreBackend.allCases)
    func proofsAndTilesFromTheStoreVerifyAcrossATileBoundary(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        // 250 entries in one transaction, then one per edit.
        try store.importCustomers(try (0..<250).map {
            CustomerImport(name: try Sample.customer(String(format: "c%03d", $0)), hosts: [
                HostPins(hostname: try Sample.host("api.example.com"), pins: [try Sample.hashPin(UInt8($0 % 256))]),
            ], ownSigningIdentity: nil, origin: "test")
        }, actor: Sample.actor)
        #expect(try store.transparencyLogSize() == 250)
        for index in 0..<10 {
            try store.addCustomer(try Sample.customer("late\(index)"), actor: Sample.actor)
        }
        let view = try MonitorView(store)
        let size = view.entries.count
        #expect(size == 260)
        let reader = store.transparencyHashReader

        for treeSize in [1, 2, 3, 7, 8, 250, 255, 256, 257, size] {
            #expect(try store.transparencyTreeHead(size: UInt64(treeSize)).rootHash == view.root(ofSize: treeSize), "size \(treeSize)")
        }
        #expect(throws: StoreError(.invalidInput, "")) { try store.transparencyTreeHead(size: UInt64(size + 1)) }

        for treeSize in [size, 257, 256, 255] {
            let root = view.root(ofSize: treeSize)
            for leaf in 0..<treeSize {
                let proof = try InclusionProof.generate(leafIndex: UInt64(leaf), treeSize: UInt64(treeSize), from: reader)
                try proof.verify(leafHash: TreeHasher.leafHash(ofEntry: view.entries[leaf]), rootHash: root)
            }
        }
        let sizes = [1, 2, 3, 7, 8, 100, 250, 255, 256, 257, 259, size]
        for old in sizes {
            for new in sizes where new >= old {
                try ConsistencyProof.generate(oldSize: UInt64(old), newSize: UInt64(new), from: reader)
                    .verify(oldRoot: view.root(ofSize: old), newRoot: view.root(ofSize: new))
            }
        }
        // An entry's proof fails for another entry's bytes: the proofs are not vacuous.
        let proof = try InclusionProof.generate(leafIndex: 5, treeSize: UInt64(size), from: reader)
        #expect(throws: TransparencyError(.inclusionProofFailed, "")) {
            try proof.verify(leafHash: TreeHasher.leafHash(ofEntry: view.entries[6]), rootHash: view.root(ofSize: size))
        }

        // Tiles: level 0 is the leaf hashes, the level-1 tile the root of the first 256 entries.
        let tiles = TileLayout.hashTiles(forTreeSize: UInt64(size))
        #expect(tiles.map(\.path) == ["tile/0/000", "tile/0/001.p/4", "tile/1/000.p/1"])
        #expect(try TileLayout.contents(of: tiles[0], from: reader) == view.entries[0..<256].flatMap { TreeHasher.leafHash(ofEntry: $0).bytes })
        #expect(try TileLayout.contents(of: tiles[1], from: reader) == view.entries[256..<260].flatMap { TreeHasher.leafHash(ofEntry: $0).bytes })
        #expect(try TileLayout.contents(of: tiles[2], from: reader) == view.root(ofSize: 256).bytes)
        for bundle in TileLayout.entryBundles(forTreeSize: UInt64(size)) {
            let first = bundle.index * 256
            let encoded = try EntryBundle.encode(try store.logEntries(first..<(first + UInt64(bundle.width))).map(\.leafData))
            #expect(try EntryBundle.decode(encoded, at: bundle) == Array(view.entries[Int(first)..<(Int(first) + bundle.width)]))
        }
        #expect(throws: StoreError(.invalidInput, "")) { try store.logEntries(255..<261) }
        #expect(throws: StoreError(.invalidInput, "")) { try reader.hashes(at: [try MerkleNodePosition(level: 0, index: 260)]) }
    }

    /// An attacker with raw SQL access cannot rewrite, delete or truncate what was logged: the database refuses.
    @Test(arguments: StoreBackend.allCases)
    func theLogRefusesRewritesThroughRawSQL(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(try Sample.host("api.example.com"), pins: [try Sample.hashPin(1)], to: acme, actor: Sample.actor)
        let before = try dump(store)
        let head = try store.transparencyTreeHead()

        var attacks = [
            "UPDATE transparency_log_entry SET leaf_data = leaf_hash WHERE log_index = 1",
            "UPDATE transparency_log_entry SET version = version + 1",
            "DELETE FROM transparency_log_entry WHERE log_index = 1",
            "DELETE FROM transparency_log_entry",
            "UPDATE transparency_log_hash SET hash = hash WHERE level = 1",
            "DELETE FROM transparency_log_hash WHERE level = 0 AND node_index = 1",
            "DELETE FROM transparency_log_hash",
        ]
        if backend == .postgreSQL {
            attacks += ["TRUNCATE transparency_log_entry", "TRUNCATE transparency_log_hash", "TRUNCATE transparency_log_entry, transparency_log_hash"]
        }
        for attack in attacks {
            let error = #expect(throws: (any Error).self, "\(attack)") {
                try store.database.write { db in try db.execute(attack) }
            }
            #expect("\(String(describing: error))".contains("append-only"), "\(attack): \(String(describing: error))")
        }
        #expect(try dump(store) == before)
        #expect(try store.transparencyTreeHead() == head)
    }

    /// A database from before the log gets one holding each customer's current version, in name order, when the
    /// migration runs; and appends on from there.
    @Test(arguments: StoreBackend.allCases)
    func aDatabaseFromBeforeTheLogGetsEveryCustomersCurrentVersion(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try StoreCopyTests().populate(fixture.store)
        try fixture.store.addCustomer(try Sample.customer("Zed"), actor: Sample.actor)
        try fixture.store.addCustomer(try Sample.customer("beta"), actor: Sample.actor)
        try fixture.store.close()

        // The schema and data as migration 0012 left them.
        let undo = """
            DROP TABLE transparency_log_entry; DROP TABLE transparency_log_hash;
            """
        switch fixture.location {
        case .sqlite(let path):
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: undo + "DELETE FROM grdb_migrations WHERE identifier = '0013_transparency_log'")
            }
            try queue.close()
        case .postgreSQL(let postgres):
            _ = try SharedTestPostgres.server().psql(undo + """
                DROP FUNCTION pinset_transparency_log_append_only();
                DELETE FROM pinset_migrations WHERE identifier = '0013_transparency_log';
                """, database: postgres.database)
        }

        let store = try PinStore(location: fixture.location, clock: fixture.clock.now)
        defer { try? store.close() }
        // Applied again (its record was deleted), whatever migrations came after it.
        #expect(try store.appliedMigrations().contains("0013_transparency_log"))
        let pinSets = try store.allPinSets()
        let view = try MonitorView(store)
        #expect(view.decoded == (try pinSets.map { try PinSetLogEntry(pinSet: $0) }))
        #expect(view.decoded.map(\.customer.rawValue) == ["Zed", "acme", "beta", "own"])
        try Self.expectCurrentContentLogged(store)

        try store.addHost(try Sample.host("new.example.com"), pins: [try Sample.hashPin(9)], to: try Sample.customer("beta"), actor: Sample.actor)
        #expect(try store.transparencyLogSize() == 5)
        try Self.expectCurrentContentLogged(store)
    }

    /// `store copy` both ways and a backup carry the whole log: the copy's tree head is the source's, and the copy
    /// appends on from it.
    @Test(arguments: [(StoreBackend.sqlite, StoreBackend.postgreSQL), (.postgreSQL, .sqlite)])
    func copiesAndBackupsCarryTheLogIntact(from source: StoreBackend, to target: StoreBackend) throws {
        let original = try StoreFixture(source)
        try StoreCopyTests().populate(original.store)
        let head = try original.store.transparencyTreeHead()
        #expect(head.size > 0)
        let directory = try TemporaryDirectory(prefix: "pinset-log-copy")
        defer { directory.remove() }

        let targetLocation = try target.freshLocation(in: directory)
        let report = try PinStore.copy(from: original.location, to: targetLocation)
        #expect(report.rows["transparency_log_entry"] == Int(head.size))
        let copy = try PinStore.open(targetLocation)
        defer { try? copy.close() }
        #expect(try copy.transparencyTreeHead() == head)
        #expect(try copy.logEntries(0..<head.size) == original.store.logEntries(0..<head.size))
        try copy.addHost(try Sample.host("new.example.com"), pins: [try Sample.hashPin(9)], to: try Sample.customer("acme"), actor: Sample.actor)
        let grown = try copy.transparencyTreeHead()
        #expect(grown.size == head.size + 1)
        try ConsistencyProof.generate(oldSize: head.size, newSize: grown.size, from: copy.transparencyHashReader)
            .verify(oldRoot: head.rootHash, newRoot: grown.rootHash)
        try Self.expectCurrentContentLogged(copy)

        let backupPath = directory.file("backup.sqlite")
        try original.store.backup(to: backupPath)
        let backup = try PinStore.open(path: backupPath, readOnly: true)
        defer { try? backup.close() }
        #expect(try backup.transparencyTreeHead() == head)
    }

    /// A restore never takes the log back: the entries appended since the backup are carried over from the replaced
    /// database, and the restored versions are appended after them.
    @Test func aRestoreContinuesTheReplacedLogAndAppendsTheRaisedVersions() throws {
        let fixture = try StoreFixture(.sqlite)
        try StoreCopyTests().populate(fixture.store)
        let backups = try TemporaryDirectory(prefix: "pinset-log-backups")
        defer { backups.remove() }
        let backupPath = backups.file("backup.sqlite")
        try fixture.store.backup(to: backupPath)
        let atBackup = try fixture.store.transparencyTreeHead()
        let acme = try Sample.customer("acme")
        for byte in UInt8(20)..<UInt8(25) {
            try fixture.store.addPins([try Sample.hashPin(byte)], to: try Sample.host("cdn.example.com"), of: acme, actor: Sample.actor)
        }
        let served = try fixture.store.transparencyTreeHead()
        let servedEntries = try fixture.store.logEntries(0..<served.size)
        #expect(served.size == atBackup.size + 5)
        try fixture.store.close()
        fixture.clock.advance(by: 60)

        let report = try PinStore.restore(backup: backupPath, over: try #require(fixture.location.filePath), actor: Sample.actor, force: false, clock: fixture.clock.now)
        let restored = try PinStore(location: fixture.location, clock: fixture.clock.now)
        defer { try? restored.close() }
        let head = try restored.transparencyTreeHead()
        #expect(head.size == served.size + UInt64(report.customers.count))
        #expect(try restored.logEntries(0..<served.size) == servedEntries)
        for old in [atBackup, served] {
            try ConsistencyProof.generate(oldSize: old.size, newSize: head.size, from: restored.transparencyHashReader)
                .verify(oldRoot: old.rootHash, newRoot: head.rootHash)
        }
        try Self.expectCurrentContentLogged(restored)
        let restoredAcme = try #require(try restored.pinSet(for: acme))
        #expect(try restored.logIndex(of: acme, version: restoredAcme.version) != nil)
    }

    /// A backup whose log is not a prefix of the replaced database's (another deployment's) would fork the log:
    /// refused with nothing changed, unless the operator accepts it.
    @Test func aRestoreThatWouldForkTheLogIsRefused() throws {
        let fixture = try StoreFixture(.sqlite)
        try StoreCopyTests().populate(fixture.store)
        let other = try StoreFixture(.sqlite)
        try other.store.addCustomer(try Sample.customer("elsewhere"), actor: Sample.actor)
        let backups = try TemporaryDirectory(prefix: "pinset-log-backups")
        defer { backups.remove() }
        let backupPath = backups.file("other.sqlite")
        try other.store.backup(to: backupPath)
        let before = try dump(fixture.store)
        let head = try fixture.store.transparencyTreeHead()
        try fixture.store.close()
        let path = try #require(fixture.location.filePath)

        let error = #expect(throws: StoreError.self) {
            try PinStore.restore(backup: backupPath, over: path, actor: Sample.actor, force: false, clock: fixture.clock.now)
        }
        #expect(error?.code == .restoreRefused)
        #expect(error?.message.contains("fork") == true)
        let unchanged = try PinStore(location: fixture.location, clock: fixture.clock.now)
        #expect(try dump(unchanged) == before)
        #expect(try unchanged.transparencyTreeHead() == head)
        try unchanged.close()

        _ = try PinStore.restore(backup: backupPath, over: path, actor: Sample.actor, force: true, clock: fixture.clock.now)
        let forced = try PinStore(location: fixture.location, clock: fixture.clock.now)
        defer { try? forced.close() }
        #expect(try forced.transparencyLogSize() == 2)
        try Self.expectCurrentContentLogged(forced)
    }
}
