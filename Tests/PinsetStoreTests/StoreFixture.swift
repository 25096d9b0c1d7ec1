import Foundation
import GRDB
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import X509

/// The backends every store suite runs against: one store interface, the same tests.
enum StoreBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgreSQL

    var description: String { rawValue }

    /// A new, empty database of this backend: a file in `directory`, or a database on the shared test server.
    func freshLocation(in directory: TemporaryDirectory) throws -> StoreLocation {
        switch self {
        case .sqlite:
            return .sqlite(path: directory.file("pinset-\(UUID().uuidString).sqlite"))
        case .postgreSQL:
            let url = try SharedTestPostgres.freshDatabase()
            return .postgreSQL(try PostgresLocation(url: url, environment: SharedTestPostgres.environment))
        }
    }
}

/// A store on a fresh database — a SQLite file in its own temporary directory, or a new PostgreSQL database —
/// on a clock the test moves by hand.
final class StoreFixture {
    /// Where the clock starts: 2027-01-15T08:00:00Z, so the first version of a customer is this many
    /// milliseconds.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let firstVersion: Int64 = 1_800_000_000_000

    let directory: TemporaryDirectory
    let location: StoreLocation
    let clock: TestClock
    let store: PinStore

    /// The SQLite file's path, or the PostgreSQL URL.
    var path: String { location.description }

    init(_ backend: StoreBackend = .sqlite, clock: TestClock = TestClock(StoreFixture.start)) throws {
        directory = try TemporaryDirectory(prefix: "pinset-store")
        location = backend == .sqlite ? .sqlite(path: directory.file("pinset.sqlite")) : try backend.freshLocation(in: directory)
        self.clock = clock
        store = try PinStore(location: location, clock: clock.now)
    }

    deinit {
        try? store.close()
        directory.remove()
    }

    /// A second, independent store (its own connections) on the same database, as another process would have.
    func openAnother() throws -> PinStore {
        try PinStore(location: location, clock: clock.now)
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

/// Every table's rows, in a stable order, whatever the backend: equal dumps mean equal database content.
/// `SchemaCoverageTests` checks that `StoreCopier.tables` (and so this dump) covers every table.
func dump(_ store: PinStore, excluding excluded: Set<String> = []) throws -> String {
    try store.database.read { db in
        var lines: [String] = []
        let tables = StoreCopier.tables.map { ($0.name, $0.columns) } + [("change_counter", ["id", "value"])]
        for (name, columns) in tables.sorted(by: { $0.0 < $1.0 }) where !excluded.contains(name) {
            lines.append("TABLE \(name)")
            // The log's stored hashes are keyed by two columns; every other table's first column orders it.
            let order = name == "transparency_log_hash" ? "level, node_index" : columns[0]
            try db.forEachRow("SELECT \(columns.joined(separator: ", ")) FROM \(name) ORDER BY \(order)", []) { row in
                lines.append("  " + (try (0..<columns.count).map { try row.value(atIndex: $0).description }).joined(separator: " | "))
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension StoreFixture {
    /// A SQLite database at `path` migrated up to, not including, `identifier`: a database an earlier release wrote.
    static func database(at path: String, migratedBefore identifier: String) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path)
        guard let last = SchemaMigrator.identifiers.prefix(while: { $0 != identifier }).last else { return queue }
        try SchemaMigrator.make().migrate(queue, upTo: last)
        return queue
    }
}
