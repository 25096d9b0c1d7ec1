import Foundation
import GRDB
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import X509

/// A store on a fresh SQLite file in its own temporary directory, on a clock the test moves by hand.
final class StoreFixture {
    /// Where the clock starts: 2027-01-15T08:00:00Z, so the first version of a customer is this many
    /// milliseconds.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let firstVersion: Int64 = 1_800_000_000_000

    let directory: TemporaryDirectory
    let path: String
    let clock: TestClock
    let store: PinStore

    init(clock: TestClock = TestClock(StoreFixture.start)) throws {
        directory = try TemporaryDirectory(prefix: "pinset-store")
        path = directory.file("pinset.sqlite")
        self.clock = clock
        store = try PinStore(path: path, clock: clock.now)
    }

    deinit { directory.remove() }

    /// A second, independent store (its own connection pool) on the same file, as another process would have.
    func openAnother() throws -> PinStore {
        try PinStore(path: path, clock: clock.now)
    }
}

enum Sample {
    static let actor = "alice"

    static func customer(_ name: String) throws -> CustomerName { try CustomerName(name) }

    static func host(_ name: String) throws -> Hostname { try Hostname(name) }

    /// A pin known only by its hash, with every byte set to `byte`.
    static func hashPin(_ byte: UInt8, label: String = "") throws -> Pin {
        Pin(spkiSHA256: try SHA256Fingerprint(bytes: [UInt8](repeating: byte, count: 32)), label: label, source: PinSource(kind: .hash))
    }

    /// A CA and a leaf it issued, both as pins made from real certificates (SPKI, certificate hash, notAfter).
    /// `notAfter` defaults to well past `StoreFixture.start`: an expired certificate's `fp` no longer counts
    /// for legacy clients.
    static func certificateChainPins(notAfter: Date = Date().addingTimeInterval(3650 * 86_400)) throws -> [Pin] {
        let ca = try TestPKI.certificateAuthority(notAfter: notAfter)
        let leaf = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: ca, notAfter: notAfter)
        return [
            try PinMaterial.pin(for: leaf.certificate, source: PinSource(kind: .certificate, detail: "/etc/ssl/leaf.pem")),
            try PinMaterial.pin(for: ca.certificate, source: PinSource(kind: .liveHost, detail: "api.example.com:443")),
        ]
    }

    /// A pin made from a public key alone: SPKI known, no certificate hash, no notAfter.
    static func publicKeyPin() throws -> Pin {
        let key = try TestPKI.certificateAuthority().certificate.publicKey
        return try PinMaterial.pin(for: key, source: PinSource(kind: .publicKey, detail: "backup.pub"), label: "offline backup key")
    }
}

/// Every table's schema and rows, in a stable order: equal dumps mean equal database content.
func dump(_ store: PinStore, excluding excluded: Set<String> = []) throws -> String {
    try store.pool.read { db in
        var lines: [String] = []
        let tables = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        for table in tables {
            let name: String = table["name"]
            guard !excluded.contains(name) else { continue }
            lines.append("TABLE \(name): \(table["sql"] as String? ?? "")")
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(name.quotedDatabaseIdentifier) ORDER BY 1") {
                lines.append("  \(row.description)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
