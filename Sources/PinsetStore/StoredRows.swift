import Foundation
import PinsetCore

/// Decoding of stored rows into the core model.
///
/// Rows are read by column position from hand-written `SELECT`s rather than through `Codable` records: the
/// signing pass loads every pin of every customer, and positional access avoids a dictionary lookup per
/// column. Values are decoded with the throwing accessors: a row edited by hand must fail the read, not
/// crash the server. Each `select…` constant lists the columns in the order the matching initializer reads them.
enum StoredRows {
    /// `customer` columns for `customerRow(_:at:)`.
    static let customerColumns = "customer.id, customer.name, customer.version, customer.legacy_clients"

    /// `host` columns for `hostPins(_:at:)`, without pins. The name is read as published (case preserved).
    static let hostColumns = "host.id, host.customer_id, coalesce(host.published_hostname, host.hostname), host.port, host.include_subdomains"

    /// `pin` columns for `PinDecoder.pin(_:at:)`.
    static let pinColumns = "pin.host_id, pin.spki_sha256, pin.spki_der, pin.certificate_sha256, pin.label, pin.source, pin.not_after, pin.window_not_before, pin.window_not_after, pin.withheld"
    /// `pinColumns` as a database from before migration 0014 (publish windows) has them: no window, nothing
    /// withheld. For the follow-up of an earlier migration, which runs before 0014 has added the columns.
    static let pinColumnsBeforeWindows = "pin.host_id, pin.spki_sha256, pin.spki_der, pin.certificate_sha256, pin.label, pin.source, pin.not_after, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(0 AS BIGINT)"

    /// How many columns `pinColumns` names: where the columns a query selects after them begin.
    static let pinColumnCount = 10

    static func customerRow(_ row: any StoreRow, at offset: Int = 0) throws -> CustomerRow {
        CustomerRow(
            id: try row.decode(atIndex: offset),
            name: try customerName(row.decode(atIndex: offset + 1)),
            version: try row.decode(atIndex: offset + 2),
            servesLegacyClients: try row.decode(atIndex: offset + 3)
        )
    }

    static func customerName(_ stored: String) throws -> CustomerName {
        do {
            return try CustomerName(stored)
        } catch {
            throw StoreError(.corruptData, "The stored customer name '\(stored)' is not valid: \(error.message) Fix or remove the row with the database's own tool (sqlite3 or psql).")
        }
    }

    /// Returns the host's id, its customer's id, and the host without pins.
    static func host(_ row: any StoreRow, at offset: Int = 0) throws -> (id: Int64, customerID: Int64, host: HostPins) {
        let stored: String = try row.decode(atIndex: offset + 2)
        let hostname: Hostname
        do {
            hostname = try Hostname(stored)
        } catch {
            throw StoreError(.corruptData, "The stored host name '\(stored)' is not valid: \(error.message) Fix or remove the row with the database's own tool (sqlite3 or psql).")
        }
        let port: Int64 = try row.decode(atIndex: offset + 3)
        guard let validPort = UInt16(exactly: port), validPort > 0 else {
            throw StoreError(.corruptData, "Host '\(stored)' has the invalid stored port \(port). Fix the row with the database's own tool (sqlite3 or psql).")
        }
        let host = HostPins(hostname: hostname, port: validPort, includeSubdomains: try row.decode(atIndex: offset + 4), pins: [])
        return (try row.decode(atIndex: offset), try row.decode(atIndex: offset + 1), host)
    }

    /// Decodes pin rows. Keeps the parsed sources, since a store holds few distinct ones and parsing each
    /// row's again is a measurable part of loading every pin.
    struct PinDecoder {
        private var sources: [String: PinSource] = [:]

        /// Returns the pin's host id and the pin.
        mutating func pin(_ row: any StoreRow, at offset: Int = 0) throws -> (hostID: Int64, pin: Pin) {
            let (hostID, pin, _) = try storedPin(row, at: offset)
            return (hostID, pin)
        }

        /// Returns the pin's host id, the pin, and whether it is withheld from the content (outside its window).
        mutating func storedPin(_ row: any StoreRow, at offset: Int = 0) throws -> (hostID: Int64, pin: Pin, withheld: Bool) {
            let spkiHash = try bytes(row, offset + 1).map(fingerprint)
            let certificateHash = try bytes(row, offset + 3).map(fingerprint)
            let storedSource: String = try row.decode(atIndex: offset + 5)
            let source: PinSource
            if let known = sources[storedSource] {
                source = known
            } else {
                guard let parsed = PinSource(storedForm: storedSource) else {
                    // Named only here: formatting a hash for every pin read is a measurable part of a large load.
                    let name = spkiHash?.base64 ?? certificateHash?.hex ?? "without hashes"
                    throw StoreError(.corruptData, "The pin \(name) has the unknown stored source '\(storedSource)'; it was probably written by a newer pinset. Upgrade pinset.")
                }
                sources[storedSource] = parsed
                source = parsed
            }
            let notAfter: Int64? = try row.decode(atIndex: offset + 6)
            let pin = Pin(
                spkiSHA256: spkiHash,
                subjectPublicKeyInfo: try bytes(row, offset + 2),
                certificateSHA256: certificateHash,
                label: try row.decode(atIndex: offset + 4),
                source: source,
                notAfter: notAfter.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                window: try window(row, offset + 7)
            )
            let withheld: Int64 = try row.decode(atIndex: offset + 9)
            return (try row.decode(atIndex: offset), pin, withheld != 0)
        }

        private func window(_ row: any StoreRow, _ index: Int) throws -> PinWindow? {
            let notBefore: Int64? = try row.decode(atIndex: index)
            let notAfter: Int64? = try row.decode(atIndex: index + 1)
            guard notBefore != nil || notAfter != nil else { return nil }
            do {
                return try PinWindow(notBefore: notBefore.map(StoredRows.date), notAfter: notAfter.map(StoredRows.date))
            } catch {
                throw StoreError(.corruptData, "A stored pin has the invalid publish window \(notBefore.map(String.init) ?? "-")..\(notAfter.map(String.init) ?? "-"): \(error.message) Fix the row with the database's own tool (sqlite3 or psql).")
            }
        }
    }

    private static func bytes(_ row: any StoreRow, _ index: Int) throws -> [UInt8]? {
        try row.decode([UInt8]?.self, atIndex: index)
    }

    /// Stored form of `Pin.notAfter`: whole seconds since 1970, rounded down (X.509 times have no fractions).
    static func storedNotAfter(_ date: Date?) -> Int64? {
        date.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
    }

    static func date(_ seconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

    /// Stored form of a `PinWindow` end: whole seconds since 1970.
    static func storedSeconds(_ date: Date?) -> Int64? {
        date.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
    }

    private static func fingerprint(_ bytes: [UInt8]) throws -> SHA256Fingerprint {
        do {
            return try SHA256Fingerprint(bytes: bytes)
        } catch {
            throw StoreError(.corruptData, "A stored SHA-256 hash is \(bytes.count) bytes instead of 32. The database was edited by hand or is damaged; fix the row with the database's own tool (sqlite3 or psql).")
        }
    }
}

/// The identity of a customer row, as the writes need it.
struct CustomerRow: Sendable {
    var id: Int64
    /// The name as stored: lookups ignore case, so this may differ in case from the name asked for.
    var name: CustomerName
    var version: Int64
    /// Edits that leave a host with fewer than two pins legacy GCX clients can use are refused.
    var servesLegacyClients: Bool
}
