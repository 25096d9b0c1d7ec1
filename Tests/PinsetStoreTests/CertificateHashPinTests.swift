import Foundation
import GRDB
import PinsetCore
import PinsetMigrations
@testable import PinsetStore
import PinsetTestSupport
import Testing
import X509

/// Pins known by a certificate's SHA-256 alone (legacy `fp`), and pins that gain their certificate hash.
struct CertificateHashPinTests {
    func setUp(_ backend: StoreBackend) throws -> (StoreFixture, CustomerName, Hostname) {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        return (fixture, acme, api)
    }

    @Test(arguments: StoreBackend.allCases) func aCertificateOnlyPinIsPublishedInFpOnly(_ backend: StoreBackend) throws {
        let (fixture, acme, api) = try setUp(backend)
        let hex = String(repeating: "ab", count: 32)
        try fixture.store.addPins([try PinMaterial.pin(certificateSHA256Hex: hex)], to: api, of: acme, actor: Sample.actor)
        let pins = try #require(try fixture.store.pinSet(for: acme)?.hosts.first?.pins)
        #expect(pins.count == 1)
        #expect(pins[0].spkiSHA256 == nil)
        #expect(pins[0].certificateSHA256?.hex == hex)
        let published = PinnedHost(try #require(try fixture.store.pinSet(for: acme)?.hosts.first))
        #expect(published.certificateSHA256.map(\.hex) == [hex])
        #expect(published.spkiSHA256.isEmpty && published.subjectPublicKeyInfos.isEmpty)

        let again = #expect(throws: StoreError.self) {
            try fixture.store.addPins([try PinMaterial.pin(certificateSHA256Hex: hex)], to: api, of: acme, actor: Sample.actor)
        }
        #expect(again?.code == .pinExists)
        // Removed by its certificate hash.
        try fixture.store.removePin(try SHA256Fingerprint(hex: hex), from: api, of: acme, allowRemovingLastPin: true, actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme)?.hosts.first?.pins.isEmpty == true)
    }

    @Test(arguments: StoreBackend.allCases) func aKeyThenItsCertificatePublishesTheCertificateHash(_ backend: StoreBackend) throws {
        let (fixture, acme, api) = try setUp(backend)
        let leaf = try #require(try Sample.certificateChainPins().first)
        var keyOnly = leaf
        keyOnly.certificateSHA256 = nil
        keyOnly.notAfter = nil
        try fixture.store.addPins([keyOnly], to: api, of: acme, actor: Sample.actor)
        let change = try fixture.store.addPins([leaf], to: api, of: acme, actor: Sample.actor)
        #expect(change.upgraded == [leaf.spkiSHA256!])
        #expect(change.changed.isEmpty && change.pinCount == 1)
        let stored = try #require(try fixture.store.pinSet(for: acme)?.hosts.first?.pins.first)
        #expect(stored.certificateSHA256 == leaf.certificateSHA256)
        #expect(stored.subjectPublicKeyInfo == leaf.subjectPublicKeyInfo)
        #expect(try fixture.store.auditLog(customer: acme, limit: 1).first?.details.contains("added the certificate hash") == true)
    }

    @Test(arguments: StoreBackend.allCases) func aCertificateHashThenItsCertificateGainsTheKey(_ backend: StoreBackend) throws {
        let (fixture, acme, api) = try setUp(backend)
        let leaf = try #require(try Sample.certificateChainPins().first)
        try fixture.store.addPins([Pin(spkiSHA256: nil, certificateSHA256: leaf.certificateSHA256, source: PinSource(kind: .certificateHash))], to: api, of: acme, actor: Sample.actor)
        let change = try fixture.store.addPins([leaf], to: api, of: acme, actor: Sample.actor)
        #expect(change.upgraded.count == 1 && change.pinCount == 1)
        let stored = try #require(try fixture.store.pinSet(for: acme)?.hosts.first?.pins.first)
        #expect(stored.spkiSHA256 == leaf.spkiSHA256)
    }

    /// A database made by the first schema keeps its pins when 0003 rebuilds the pin table, and then accepts
    /// a pin without an SPKI hash.
    @Test func migrationKeepsExistingPins() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-migrate")
        defer { directory.remove() }
        let path = directory.file("old.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            try db.execute(sql: SchemaMigrations.sqlite[0].sql)
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('0001_initial')")
            try db.execute(sql: "INSERT INTO customer (name, version, created_at, updated_at) VALUES ('acme', 3, 'x', 'x')")
            try db.execute(sql: "INSERT INTO host (customer_id, hostname, port, include_subdomains, created_at) VALUES (1, 'api.example.com', 443, 0, 'x')")
            try db.execute(sql: "INSERT INTO pin (host_id, spki_sha256, label, source, created_at) VALUES (1, ?, 'old', 'hash', 'x')",
                           arguments: [Data(repeating: 7, count: 32)])
        }
        try queue.close()
        let store = try PinStore(path: path)
        #expect(try store.appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
        let pinSet = try #require(try store.pinSet(for: try Sample.customer("acme")))
        #expect(pinSet.hosts.first?.pins.map(\.label) == ["old"])
        #expect(pinSet.signer == .deploymentDefault)
        try store.addPins([try PinMaterial.pin(certificateSHA256Hex: String(repeating: "0f", count: 32))], to: try Sample.host("api.example.com"), of: try Sample.customer("acme"), actor: Sample.actor)
        #expect(try store.pinSet(for: try Sample.customer("acme"))?.hosts.first?.pins.count == 2)
        let (violations, integrity) = try store.pool.read { db in
            (try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count, try String.fetchOne(db, sql: "PRAGMA integrity_check"))
        }
        #expect(violations == 0)
        #expect(integrity == "ok")
    }
}
