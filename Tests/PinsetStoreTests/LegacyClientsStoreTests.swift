import Foundation
import GRDB
import PinsetCore
import PinsetMigrations
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Customers that serve legacy GCX clients, and host names published in the case they were given.
@Suite struct LegacyClientsStoreTests {
    @Test(arguments: StoreBackend.allCases) func editsLeavingTooFewLegacyUsablePinsAreRefusedAndChangeNothing(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), host = try Sample.host("api.example.com")
        try store.addCustomer(acme, servesLegacyClients: true, actor: Sample.actor)
        var before = try dump(store)
        let bare = #expect(throws: StoreError.self) { try store.addHost(host, to: acme, actor: Sample.actor) }
        #expect(bare?.code == .tooFewLegacyPins)
        #expect(try dump(store) == before)
        try store.setServesLegacyClients(false, for: acme, actor: Sample.actor)
        try store.addHost(host, to: acme, actor: Sample.actor)
        try store.setServesLegacyClients(true, for: acme, actor: Sample.actor)
        #expect(try store.pinSet(for: acme)?.servesLegacyClients == true)
        #expect(try store.customers().first?.servesLegacyClients == true)

        before = try dump(store)
        let hashes = #expect(throws: StoreError.self) {
            try store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: host, of: acme, actor: Sample.actor)
        }
        #expect(hashes?.code == .tooFewLegacyPins)
        #expect(try dump(store) == before)

        let chain = try Sample.certificateChainPins()
        try store.addPins(chain + [try Sample.hashPin(3)], to: host, of: acme, actor: Sample.actor)
        #expect(try store.pinSet(for: acme)?.hosts.first?.legacyUsablePins(at: fixture.clock.now()).count == 2)

        // A pin legacy clients cannot see may go; one they use may not.
        try store.removePin(try Sample.hashPin(3).spkiSHA256!, from: host, of: acme, actor: Sample.actor)
        before = try dump(store)
        let removal = #expect(throws: StoreError.self) {
            try store.removePin(chain[0].spkiSHA256!, from: host, of: acme, actor: Sample.actor)
        }
        #expect(removal?.code == .tooFewLegacyPins)
        #expect(try dump(store) == before)

        // The setting changes no published content, so the version stays; the audit log records it.
        let version = try #require(try store.pinSet(for: acme)?.version)
        fixture.clock.advance(by: 60)
        #expect(try store.setServesLegacyClients(false, for: acme, actor: Sample.actor))
        #expect(try store.setServesLegacyClients(false, for: acme, actor: Sample.actor) == false)
        #expect(try store.pinSet(for: acme)?.version == version)
        let entry = try #require(try store.auditLog(customer: acme, limit: 1).first)
        #expect(entry.action == .customerUpdated && entry.details == "legacy clients on -> off" && entry.version == version)
        try store.removePin(chain[0].spkiSHA256!, from: host, of: acme, actor: Sample.actor)
        #expect(try store.pinSet(for: acme)?.version ?? 0 > version)
    }

    @Test(arguments: StoreBackend.allCases) func aHostComesWithItsPinsInOneChange(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), host = try Sample.host("api.example.com")
        try store.addCustomer(acme, servesLegacyClients: true, actor: Sample.actor)
        let chain = try Sample.certificateChainPins()
        let before = try dump(store)
        let single = #expect(throws: StoreError.self) {
            try store.addHost(host, pins: [chain[0], try Sample.hashPin(1)], to: acme, actor: Sample.actor)
        }
        #expect(single?.code == .tooFewLegacyPins)
        #expect(try dump(store) == before)
        try store.addHost(host, pins: chain + [chain[0]], to: acme, actor: Sample.actor)
        let stored = try #require(try store.pinSet(for: acme)?.hosts.first)
        #expect(Set(stored.pins.map(\.spkiSHA256)) == Set(chain.map(\.spkiSHA256)))
        #expect(stored.legacyUsablePins(at: fixture.clock.now()).count == 2)
        #expect(try store.auditLog(customer: acme, limit: 1).first?.details.contains("with 2 pin(s)") == true)
    }

    /// A host that is already short (the setting was turned on later) can still lose pins legacy clients do
    /// not use, but not the ones they do.
    @Test(arguments: StoreBackend.allCases) func anAlreadyShortHostCanDropPinsLegacyClientsCannotUse(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), host = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(host, to: acme, actor: Sample.actor)
        let certificatePin = try Sample.certificateChainPins()[0]
        try store.addPins([certificatePin, try Sample.hashPin(1), try Sample.hashPin(2)], to: host, of: acme, actor: Sample.actor)
        try store.setServesLegacyClients(true, for: acme, actor: Sample.actor)

        try store.removePin(try Sample.hashPin(1).spkiSHA256!, from: host, of: acme, actor: Sample.actor)
        let error = #expect(throws: StoreError.self) {
            try store.removePin(certificatePin.spkiSHA256!, from: host, of: acme, actor: Sample.actor)
        }
        #expect(error?.code == .tooFewLegacyPins)
    }

    /// A short host may gain legacy-usable pins one at a time: an addition is refused only when the host stays
    /// short without gaining one. A certificate that has expired by the time of the change does not count.
    @Test(arguments: StoreBackend.allCases) func anAdditionThatImprovesAShortHostIsAllowed(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), host = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(host, to: acme, actor: Sample.actor)
        try store.addPins([try Sample.hashPin(1)], to: host, of: acme, actor: Sample.actor)
        try store.setServesLegacyClients(true, for: acme, actor: Sample.actor)
        let chain = try Sample.certificateChainPins()

        // 0 → 1 usable: allowed, though still short.
        try store.addPins([chain[0]], to: host, of: acme, actor: Sample.actor)
        #expect(try store.pinSet(for: acme)?.hosts.first?.legacyUsablePins(at: fixture.clock.now()).count == 1)
        // 1 → 1: refused.
        var before = try dump(store)
        let unusable = #expect(throws: StoreError.self) { try store.addPins([try Sample.hashPin(2)], to: host, of: acme, actor: Sample.actor) }
        #expect(unusable?.code == .tooFewLegacyPins)
        #expect(unusable?.message.contains("pin add") == true)
        #expect(try dump(store) == before)
        // A certificate already expired at the time of the change adds nothing legacy clients can use.
        let expired = try Sample.certificateChainPins(notAfter: StoreFixture.start.addingTimeInterval(-86_400))
        before = try dump(store)
        let stale = #expect(throws: StoreError.self) { try store.addPins([expired[0]], to: host, of: acme, actor: Sample.actor) }
        #expect(stale?.code == .tooFewLegacyPins)
        #expect(try dump(store) == before)
        // 1 → 2.
        try store.addPins([chain[1]], to: host, of: acme, actor: Sample.actor)
        #expect(try store.pinSet(for: acme)?.hosts.first?.legacyUsablePins(at: fixture.clock.now()).count == 2)
        // Once the certificates expire, the host counts as short again.
        fixture.clock.advance(by: 3651 * 86_400 + Date().timeIntervalSince(StoreFixture.start))
        #expect(try store.pinSet(for: acme)?.hosts.first?.legacyUsablePins(at: fixture.clock.now()).count == 0)
    }

    /// Every option the refusal names exists on the command it names.
    @Test(arguments: StoreBackend.allCases) func refusalsNameOnlyOptionsThatExist(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), host = try Sample.host("api.example.com")
        try store.addCustomer(acme, servesLegacyClients: true, actor: Sample.actor)
        let newHost = #expect(throws: StoreError.self) { try store.addHost(host, pins: [try Sample.hashPin(1)], to: acme, actor: Sample.actor) }
        let message = try #require(newHost?.message)
        #expect(message.contains("'pinset host add --certificate FILE'"), "\(message)")
        #expect(!message.contains("--from-host") && !message.contains("--public-key"), "\(message)")
    }

    @Test func hostNamesKeepTheirCaseAndStayUniqueIgnoringIt() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(try Hostname("API.Example.com"), to: acme, actor: Sample.actor)
        try store.addHost(try Hostname("lower.example.com"), to: acme, actor: Sample.actor)
        let hosts = try #require(try store.pinSet(for: acme)?.hosts)
        #expect(hosts.map(\.hostname.spelling) == ["API.Example.com", "lower.example.com"])
        #expect(try fixture.openAnother().allPinSets().first?.hosts.first?.hostname.spelling == "API.Example.com")
        let duplicate = #expect(throws: StoreError.self) {
            try store.addHost(try Hostname("api.EXAMPLE.com"), to: acme, actor: Sample.actor)
        }
        #expect(duplicate?.code == .hostExists)
        // Only a spelling that differs is stored; the normalised name stays the key.
        let stored = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT hostname, published_hostname FROM host ORDER BY hostname")
                .map { [$0[0] as String?, $0[1] as String?] }
        }
        #expect(stored == [["api.example.com", "API.Example.com"], ["lower.example.com", nil]])
    }

    /// A database made before these columns existed upgrades with every customer not serving legacy clients
    /// and every host published under its stored name.
    @Test func anOlderDatabaseUpgradesWithDefaults() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-store")
        defer { directory.remove() }
        let path = directory.file("old.sqlite")
        let queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        let initial = try #require(SchemaMigrations.sqlite.first)
        migrator.registerMigration(initial.identifier) { db in try db.execute(sql: initial.sql) }
        try migrator.migrate(queue)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO customer (name, version, created_at, updated_at) VALUES ('acme', 1, '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000')")
            try db.execute(sql: "INSERT INTO host (customer_id, hostname, port, include_subdomains, created_at) VALUES (1, 'api.example.com', 443, 0, '2026-01-01 00:00:00.000')")
        }
        try queue.close()

        let store = try PinStore(path: path)
        #expect(try store.appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
        let pinSet = try #require(try store.pinSet(for: try Sample.customer("acme")))
        #expect(pinSet.servesLegacyClients == false)
        #expect(pinSet.hosts.first?.hostname.spelling == "api.example.com")
    }
}
