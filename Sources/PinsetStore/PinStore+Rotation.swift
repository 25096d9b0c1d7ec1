import Foundation
import PinsetCore

/// A pin as key rotation sees it: the bundle content plus when it entered the pin set and whether it is a key
/// pinned ahead of the renewal that will use it.
public struct RotationPin: Hashable, Sendable {
    public var pin: Pin
    /// Pinned for the host's next certificate; no certificate of the host is known to use it yet.
    public var isNext: Bool
    /// When the change that added it was committed: no bundle signed earlier carries it.
    public var addedAt: Date
    /// The customer's content version of that change: every bundle of this version or later carries it.
    public var publishedVersion: Int64

    public init(pin: Pin, isNext: Bool, addedAt: Date, publishedVersion: Int64) {
        self.pin = pin
        self.isNext = isNext
        self.addedAt = addedAt
        self.publishedVersion = publishedVersion
    }
}

/// One host with its pins as key rotation sees them.
public struct RotationHost: Hashable, Sendable {
    public var customer: CustomerName
    /// The customer's content version now.
    public var customerVersion: Int64
    public var hostname: Hostname
    public var port: UInt16
    public var includeSubdomains: Bool
    /// The customer's apps include legacy GCX clients, which can use only some pins (`Pin.isUsableByLegacyClients`).
    public var servesLegacyClients: Bool
    public var pins: [RotationPin]

    public init(customer: CustomerName, customerVersion: Int64, hostname: Hostname, port: UInt16, includeSubdomains: Bool = false,
                servesLegacyClients: Bool = false, pins: [RotationPin]) {
        self.customer = customer
        self.customerVersion = customerVersion
        self.hostname = hostname
        self.port = port
        self.includeSubdomains = includeSubdomains
        self.servesLegacyClients = servesLegacyClients
        self.pins = pins
    }

    public var nextPins: [RotationPin] { pins.filter(\.isNext) }
}

/// What `markNextKeys` did.
public struct NextKeyChange: Hashable, Sendable {
    /// Keys that were not pinned and now are, as next keys.
    public var added: [SHA256Fingerprint]
    /// Keys that were pinned and are now marked next.
    public var marked: [SHA256Fingerprint]
    /// Keys already pinned as next.
    public var alreadyNext: [SHA256Fingerprint]
    /// The customer's content version after the change (unchanged when only marks changed: marks are not part of
    /// the bundle).
    public var version: Int64
}

/// What `completeRotation` did.
public struct RotationCompletion: Hashable, Sendable {
    /// Next keys that the host now serves: their mark was cleared.
    public var promoted: [SHA256Fingerprint]
    /// Pins of keys neither live, nor next, nor kept: removed.
    public var retired: [Pin]
    /// The pins left.
    public var remaining: [RotationPin]
    /// The customer's content version after the change.
    public var version: Int64

    public var changedNothing: Bool { promoted.isEmpty && retired.isEmpty }
}

extension PinStore {
    /// The hosts of one customer (or of all customers) with each pin's rotation state, sorted by customer and
    /// host name; pins sorted as in `pinSet(for:)`.
    public func rotationHosts(of customer: CustomerName? = nil) throws -> [RotationHost] {
        try database.read { db in
            let condition = customer == nil ? "" : "WHERE customer.name = ?"
            let arguments: [any SQLArgument] = customer.map { [$0.rawValue] } ?? []
            var pinsByHost: [Int64: [RotationPin]] = [:]
            var decoder = StoredRows.PinDecoder()
            try db.forEachRow("""
                SELECT \(StoredRows.pinColumns), pin.next_key, pin.created_at, pin.published_version, customer.version
                FROM pin JOIN host ON pin.host_id = host.id JOIN customer ON host.customer_id = customer.id \(condition)
                """, arguments) { row in
                let (hostID, pin, withheld) = try decoder.storedPin(row)
                // A pin outside its publish window is in no bundle: apps cannot have it, so it takes no part in a rotation.
                guard !withheld else { return }
                let extra = StoredRows.pinColumnCount
                let next: Int64 = try row.decode(atIndex: extra)
                let published: Int64? = try row.decode(atIndex: extra + 2)
                // Unstamped only when written by hand: the customer's version is then the safe guess.
                let customerVersion: Int64 = try row.decode(atIndex: extra + 3)
                pinsByHost[hostID, default: []].append(RotationPin(
                    pin: pin, isNext: next != 0, addedAt: try row.decode(atIndex: extra + 1), publishedVersion: published ?? customerVersion
                ))
            }
            return try db.fetchAll("""
                SELECT \(StoredRows.hostColumns), customer.name, customer.version, customer.legacy_clients
                FROM host JOIN customer ON host.customer_id = customer.id \(condition)
                ORDER BY customer.name COLLATE \(db.dialect.binaryCollation), host.hostname COLLATE \(db.dialect.binaryCollation)
                """, arguments) { row in
                let (hostID, _, host) = try StoredRows.host(row)
                return RotationHost(
                    customer: try StoredRows.customerName(row.decode(atIndex: 5)), customerVersion: try row.decode(atIndex: 6),
                    hostname: host.hostname, port: host.port, includeSubdomains: host.includeSubdomains,
                    servesLegacyClients: try row.decode(atIndex: 7),
                    pins: (pinsByHost[hostID] ?? []).sorted { ($0.pin.sortKey?.bytes ?? []).lexicographicallyPrecedes($1.pin.sortKey?.bytes ?? []) }
                )
            }
        }
    }

    /// The SPKI hashes of every pin marked next, by customer and host: what the monitor needs to tell a renewal
    /// onto a pre-pinned key from a host fallen back to its spare.
    public func nextKeys() throws -> [CustomerName: [Hostname: Set<SHA256Fingerprint>]] {
        try database.read { db in
            var result: [CustomerName: [Hostname: Set<SHA256Fingerprint>]] = [:]
            try db.forEachRow("""
                SELECT customer.name, host.hostname, pin.spki_sha256
                FROM pin JOIN host ON pin.host_id = host.id JOIN customer ON host.customer_id = customer.id
                WHERE pin.next_key = 1 AND pin.spki_sha256 IS NOT NULL
                """, []) { row in
                let customer = try StoredRows.customerName(row.decode(atIndex: 0))
                let stored: String = try row.decode(atIndex: 1)
                guard let hostname = try? Hostname(stored), let key = try? SHA256Fingerprint(bytes: try row.decode([UInt8].self, atIndex: 2)) else {
                    throw StoreError(.corruptData, "A next pin of '\(customer)' host '\(stored)' has an invalid host name or hash. Fix the row with the database's own tool (sqlite3 or psql).")
                }
                result[customer, default: [:]][hostname, default: []].insert(key)
            }
            return result
        }
    }

    /// Pins keys for the host's next certificate, in one transaction: a key not pinned yet is added (so apps
    /// receive it with the next bundle) and marked next; a key already pinned is marked next. When every key is
    /// already a next key nothing is written (no version, no audit entry), so a hook may safely ask again.
    ///
    /// - Throws: `StoreError.invalidInput` for a pin without an SPKI hash (a next key is a key: a certificate
    ///   that does not exist yet has no hash), or an empty reason; `.customerNotFound`, `.hostNotFound`,
    ///   `.tooFewLegacyPins`.
    @discardableResult
    public func markNextKeys(_ pins: [Pin], for hostname: Hostname, of customer: CustomerName, reason: String, actor: String) throws -> NextKeyChange {
        guard !pins.isEmpty else {
            throw StoreError(.invalidInput, "No key was given for \(hostname). Give the public key, CSR or certificate of the key the next certificate will use.")
        }
        if let keyless = pins.first(where: { $0.spkiSHA256 == nil }) {
            throw StoreError(.invalidInput, "\(keyless.displayName) names a certificate, not a key. A next key is pinned by its public key: give the key the next certificate will use (--public-key, --csr or --certificate, or its --hash).")
        }
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else {
            throw StoreError(.invalidInput, "The reason is empty. Say why the key is pinned ahead (for example 'acme: key for the renewal after 2026-12-01'); it goes to the audit log.")
        }
        try Self.validateKeyMaterial(pins, of: hostname)
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            let legacyUsableBefore = owner.servesLegacyClients ? try change.legacyUsablePinCount(ofHost: hostID) : 0
            var added: [SHA256Fingerprint] = []
            var marked: [SHA256Fingerprint] = []
            var alreadyNext: [SHA256Fingerprint] = []
            for pin in pins {
                guard let key = pin.spkiSHA256, !(added + marked + alreadyNext).contains(key) else { continue }
                let next = try db.fetchValue(Int64.self, "SELECT next_key FROM pin WHERE host_id = ? AND spki_sha256 = ?", [hostID, key.bytes])
                switch next {
                case 1?:
                    alreadyNext.append(key)
                case _?:
                    try db.execute("UPDATE pin SET next_key = 1 WHERE host_id = ? AND spki_sha256 = ?", [hostID, key.bytes])
                    marked.append(key)
                case nil:
                    try Self.insert(pin, hostID: hostID, at: change.now, db)
                    try db.execute("UPDATE pin SET next_key = 1 WHERE host_id = ? AND spki_sha256 = ?", [hostID, key.bytes])
                    added.append(key)
                }
            }
            // Asking again for what is already so changes nothing and records nothing: hooks may retry.
            guard !added.isEmpty || !marked.isEmpty else {
                return NextKeyChange(added: [], marked: [], alreadyNext: alreadyNext, version: owner.version)
            }
            let details = "\(hostname): next key(s) " + [
                added.isEmpty ? nil : "added " + added.map(\.base64).joined(separator: ", "),
                marked.isEmpty ? nil : "marked " + marked.map(\.base64).joined(separator: ", "),
            ].compactMap { $0 }.joined(separator: "; ") + "; reason: \(reason)"
            let version: Int64
            if added.isEmpty {
                // Marks are not in the bundle: a new version would make apps fetch the same pins again.
                try change.recordSettingChange(of: owner, .nextKeysAdded, details)
                version = owner.version
            } else {
                try change.requireLegacyBackup(ofHost: hostID, hostname: hostname, customer: owner, edit: .addition(usableBefore: legacyUsableBefore))
                version = try change.recordChange(of: owner, .nextKeysAdded, details)
            }
            return NextKeyChange(added: added, marked: marked, alreadyNext: alreadyNext, version: version)
        }
    }

    /// Finishes a renewal, in one transaction: next keys among `live` (the chain the host serves now) lose their
    /// mark, and pins that match no certificate of `live`, are not next and are not in `keep` are removed.
    ///
    /// - Parameter expected: the host's pins when `live` was fetched; the completion is refused if they changed
    ///   since (a pin added meanwhile must not be retired unseen).
    /// - Throws: `StoreError.pinNotFound` when no pin matches `live` (apps would be failing already: fix the pins
    ///   first); `.changedSinceCheck` when the pins are no longer `expected`; `.lastPinOfHost` when the pins left would all be in the live chain, so that the next
    ///   key change would lock apps out (pin the next key first); `.invalidInput` for an empty reason;
    ///   `.customerNotFound`, `.hostNotFound`, `.tooFewLegacyPins`.
    public func completeRotation(of hostname: Hostname, of customer: CustomerName, live: [LiveCertificate], keep: Set<SHA256Fingerprint> = [],
                                 expected: [Pin]? = nil, reason: String, actor: String) throws -> RotationCompletion {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else {
            throw StoreError(.invalidInput, "The reason is empty. Say which renewal went live (for example 'acme: certificate of 2026-12-01 deployed'); it goes to the audit log.")
        }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            guard let host = try Self.rotationHost(hostID: hostID, of: owner, hostname: hostname, db) else {
                throw StoreError.hostNotFound(hostname.rawValue, customer: owner.name.rawValue)
            }
            if let expected, Set(expected) != Set(host.pins.map(\.pin)) {
                throw StoreError(.changedSinceCheck, "The pins of \(hostname) changed while its live chain was fetched. Nothing was changed. Run the command again.")
            }
            let isLive: (RotationPin) -> Bool = { entry in live.contains { $0.isMatched(by: entry.pin) } }
            guard host.pins.contains(where: isLive) else {
                throw StoreError(.pinNotFound, "No pin of \(hostname) matches the chain it serves now (" + live.map { "\($0.role) \($0.spkiSHA256.base64)" }.joined(separator: ", ") + "): apps are failing to connect, and nothing can be retired. Nothing was changed. Pin the live key, or put back the certificate whose key is pinned.")
            }
            let promoted = host.pins.filter { $0.isNext && isLive($0) }
            // A pin with a publish window is retired by its window, on the date the operator set.
            let retired = host.pins.filter { !isLive($0) && !$0.isNext && $0.pin.window == nil && !($0.pin.sortKey.map(keep.contains) ?? false) }
            let remaining = host.pins.filter { !retired.contains($0) }
            guard !promoted.isEmpty || !retired.isEmpty else {
                return RotationCompletion(promoted: [], retired: [], remaining: host.pins, version: owner.version)
            }
            guard remaining.contains(where: { !isLive($0) }) else {
                throw StoreError(.lastPinOfHost, "After retiring, every pin of \(hostname) would match the chain it serves now, so a renewal with a new key would lock apps out. Nothing was changed. Pin the key of the next certificate first ('pinset rotation add-next \(owner.name) \(hostname) --public-key FILE --reason TEXT'), or keep a backup pin with --keep.")
            }
            let legacyUsableBefore = owner.servesLegacyClients ? try change.legacyUsablePinCount(ofHost: hostID) : 0
            for entry in promoted {
                try db.execute("UPDATE pin SET next_key = 0 WHERE host_id = ? AND spki_sha256 = ?", [hostID, entry.pin.spkiSHA256?.bytes])
            }
            for entry in retired {
                if let key = entry.pin.spkiSHA256 {
                    try db.execute("DELETE FROM pin WHERE host_id = ? AND spki_sha256 = ?", [hostID, key.bytes])
                } else {
                    try db.execute("DELETE FROM pin WHERE host_id = ? AND spki_sha256 IS NULL AND certificate_sha256 = ?", [hostID, entry.pin.certificateSHA256?.bytes])
                }
            }
            var parts = ["\(hostname): rotation completed; live chain " + live.map { "\($0.role) \($0.spkiSHA256.base64)" }.joined(separator: ", ")]
            if !promoted.isEmpty {
                parts.append("next key(s) now live: " + promoted.map(\.pin.displayName).joined(separator: ", "))
            }
            if !retired.isEmpty {
                let names: [String] = retired.map { entry in
                    let label = entry.pin.label.isEmpty ? "no label" : entry.pin.label
                    return "\(entry.pin.displayName) (\(label))"
                }
                parts.append("retired: " + names.joined(separator: ", "))
            }
            parts.append("reason: \(reason)")
            let details = parts.joined(separator: "; ")
            let version: Int64
            if retired.isEmpty {
                try change.recordSettingChange(of: owner, .rotationCompleted, details)
                version = owner.version
            } else {
                try change.requireLegacyBackup(ofHost: hostID, hostname: hostname, customer: owner, edit: .removal(usableBefore: legacyUsableBefore))
                version = try change.recordChange(of: owner, .rotationCompleted, details)
            }
            let remainingNow = remaining.map { entry in
                var entry = entry
                if promoted.contains(entry) { entry.isNext = false }
                return entry
            }
            return RotationCompletion(promoted: promoted.compactMap(\.pin.spkiSHA256), retired: retired.map(\.pin), remaining: remainingNow, version: version)
        }
    }

    private static func rotationHost(hostID: Int64, of owner: CustomerRow, hostname: Hostname, _ db: any StoreConnection) throws -> RotationHost? {
        var decoder = StoredRows.PinDecoder()
        let pins = try db.fetchAll("""
            SELECT \(StoredRows.pinColumns), pin.next_key, pin.created_at, pin.published_version FROM pin WHERE pin.host_id = ? AND pin.withheld = 0
            """, [hostID]) { row in
            let (_, pin) = try decoder.pin(row)
            let extra = StoredRows.pinColumnCount
            let next: Int64 = try row.decode(atIndex: extra)
            let published: Int64? = try row.decode(atIndex: extra + 2)
            return RotationPin(pin: pin, isNext: next != 0, addedAt: try row.decode(atIndex: extra + 1), publishedVersion: published ?? owner.version)
        }
        let port = try db.fetchValue(Int64.self, "SELECT port FROM host WHERE id = ?", [hostID])
        guard let port, let validPort = UInt16(exactly: port) else { return nil }
        return RotationHost(customer: owner.name, customerVersion: owner.version, hostname: hostname, port: validPort, pins: pins)
    }
}
