import Foundation
import GRDB
import PinsetCore

extension PinStore {
    /// Adds several pins (for example a whole certificate chain) to a host, in one transaction.
    ///
    /// Pins already present on the host, and repeats within `pins`, are skipped and reported in
    /// `PinChange.skipped`; the batch fails only when it would add nothing.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, `.pinExists` when every pin is already
    ///   present, or `.invalidInput` for an empty batch or a pin whose SubjectPublicKeyInfo does not hash to
    ///   its SPKI SHA-256 (such a pin would make legacy `pk` clients and `pin-sha256` clients disagree).
    @discardableResult
    public func addPins(_ pins: [Pin], to hostname: Hostname, of customer: CustomerName, actor: String) throws -> PinChange {
        guard !pins.isEmpty else {
            throw StoreError(.invalidInput, "No pins were given for \(hostname). Give at least one certificate, public key or SPKI hash.")
        }
        for pin in pins {
            if let spki = pin.subjectPublicKeyInfo, SHA256Fingerprint(of: spki) != pin.spkiSHA256 {
                throw StoreError(.invalidInput, "The pin \(pin.spkiSHA256.base64) carries a SubjectPublicKeyInfo whose SHA-256 is \(SHA256Fingerprint(of: spki).base64). Make the pin from the certificate or key itself.")
            }
        }
        return try pool.write { db in
            let change = try ChangeRecorder(db, actor: actor)
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            var present = try Set(Data.fetchAll(db, sql: "SELECT spki_sha256 FROM pin WHERE host_id = ?", arguments: [hostID]).map { [UInt8]($0) })

            var added: [Pin] = []
            var skipped: [SHA256Fingerprint] = []
            for pin in pins {
                guard present.insert(pin.spkiSHA256.bytes).inserted else {
                    skipped.append(pin.spkiSHA256)
                    continue
                }
                try db.execute(sql: """
                    INSERT INTO pin (host_id, spki_sha256, spki_der, certificate_sha256, label, source, not_after, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [
                        hostID, Data(pin.spkiSHA256.bytes), pin.subjectPublicKeyInfo.map { Data($0) },
                        pin.certificateSHA256.map { Data($0.bytes) }, pin.label, pin.source.storedForm,
                        StoredRows.storedNotAfter(pin.notAfter), change.now,
                    ])
                added.append(pin)
            }
            guard !added.isEmpty else {
                throw StoreError(.pinExists, pins.count == 1
                    ? "Host \(hostname) of customer '\(owner.name)' already has the pin \(pins[0].spkiSHA256.base64). Nothing was changed."
                    : "Host \(hostname) of customer '\(owner.name)' already has all \(pins.count) given pins. Nothing was changed.")
            }

            let described = added.map { "\($0.spkiSHA256.base64) (\($0.label.isEmpty ? "no label" : $0.label); \($0.source.storedForm))" }
            var details = "\(hostname): added \(added.count) pin(s): " + described.joined(separator: ", ")
            if !skipped.isEmpty {
                details += "; skipped \(skipped.count) already present: " + skipped.map(\.base64).joined(separator: ", ")
            }
            let version = try change.recordChange(of: owner, .pinsAdded, details)
            return PinChange(customer: owner.name, hostname: hostname, changed: added.map(\.spkiSHA256), skipped: skipped,
                             pinCount: try change.pinCount(ofHost: hostID), version: version)
        }
    }

    /// Removes one pin from a host.
    ///
    /// Removing a host's last pin stops the host being published (bundles carry only hosts with pins), so a
    /// covering include-subdomains parent's pins, or none, apply to it; it is refused unless
    /// `allowRemovingLastPin` is true.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, `.pinNotFound`, or `.lastPinOfHost`.
    @discardableResult
    public func removePin(_ spkiSHA256: SHA256Fingerprint, from hostname: Hostname, of customer: CustomerName, allowRemovingLastPin: Bool = false, actor: String) throws -> PinChange {
        try pool.write { db in
            let change = try ChangeRecorder(db, actor: actor)
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            let label = try String.fetchOne(db, sql: "SELECT label FROM pin WHERE host_id = ? AND spki_sha256 = ?", arguments: [hostID, Data(spkiSHA256.bytes)])
            guard let label else {
                throw StoreError(.pinNotFound, "Host \(hostname) of customer '\(owner.name)' has no pin \(spkiSHA256.base64). List its pins with 'pinset pin list \(owner.name) \(hostname)'.")
            }
            let count = try change.pinCount(ofHost: hostID)
            if count == 1 && !allowRemovingLastPin {
                throw StoreError(.lastPinOfHost, "\(spkiSHA256.base64) is the last pin of \(hostname); removing it would stop publishing the host, and apps would then apply a covering include-subdomains parent's pins to it, or none. Add the replacement pin first, remove the host with 'pinset host remove', or pass --allow-last-pin to do it anyway.")
            }
            try db.execute(sql: "DELETE FROM pin WHERE host_id = ? AND spki_sha256 = ?", arguments: [hostID, Data(spkiSHA256.bytes)])
            let version = try change.recordChange(
                of: owner, .pinRemoved,
                "\(hostname): removed pin \(spkiSHA256.base64) (\(label.isEmpty ? "no label" : label)); \(count - 1) pin(s) left"
            )
            return PinChange(customer: owner.name, hostname: hostname, changed: [spkiSHA256], skipped: [],
                             pinCount: count - 1, version: version)
        }
    }
}
