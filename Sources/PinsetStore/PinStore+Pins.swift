import Foundation
import PinsetCore

extension PinStore {
    /// Adds several pins (for example a whole certificate chain) to a host, in one transaction.
    ///
    /// A pin is present when the host has a pin with the same SPKI hash, or — for a pin known only by its
    /// certificate hash — the same certificate hash. A present pin that lacks a certificate hash gains the one
    /// a new pin for the same key carries (and a certificate-only pin gains the key), so that adding a key and
    /// then its certificate publishes the certificate's `fp`; these are reported in `PinChange.upgraded`.
    /// Other pins already present, and repeats within `pins`, are skipped and reported in
    /// `PinChange.skipped`; the batch fails only when it would change nothing.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, `.pinExists` when nothing would change, or
    ///   `.invalidInput` for an empty batch, a pin with neither hash, or a pin whose SubjectPublicKeyInfo does
    ///   not hash to its SPKI SHA-256 (legacy `pk` clients and `pin-sha256` clients would disagree), or
    ///   `.tooFewLegacyPins` when the customer serves legacy clients and the host would still have fewer than
    ///   two pins they can use without gaining one.
    @discardableResult
    public func addPins(
        _ pins: [Pin], to hostname: Hostname, of customer: CustomerName, liveCheck: LiveCheckRecord? = nil, unlessReviewRequired: Bool = false,
        note: String? = nil, actor: String
    ) throws -> PinChange {
        guard !pins.isEmpty else {
            throw StoreError(.invalidInput, "No pins were given for \(hostname). Give at least one certificate, public key or hash.")
        }
        try Self.validateKeyMaterial(pins, of: hostname)
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            if unlessReviewRequired { try change.requireNoReview(of: customer) }
            return try change.addPins(pins, to: hostname, of: customer, liveCheck: liveCheck, note: note)
        }
    }
}

extension ChangeRecorder {
    /// `PinStore.addPins` inside a transaction that is already open; `note` ends the audit entry (the change
    /// request it applies, say).
    func addPins(_ pins: [Pin], to hostname: Hostname, of customer: CustomerName, liveCheck: LiveCheckRecord?, note: String? = nil) throws -> PinChange {
        let change = self
        let owner = try change.customer(customer)
        let (hostID, current) = try change.host(hostname, of: owner)
        try change.requireUnchanged(hostID: hostID, current: current, since: liveCheck)
        try change.requireWindowsNotEnded(pins, of: hostname)
        let legacyUsableBefore = owner.servesLegacyClients ? try change.legacyUsablePinCount(ofHost: hostID) : 0
        let listedBefore = try change.publishedPinCount(ofHost: hostID)
        var bySPKI: [[UInt8]: [UInt8]?] = [:]
        var certificates: Set<[UInt8]> = []
        try db.forEachRow("SELECT spki_sha256, certificate_sha256 FROM pin WHERE host_id = ?", [hostID]) { row in
            let spki = try row.decode([UInt8]?.self, atIndex: 0)
            let certificate = try row.decode([UInt8]?.self, atIndex: 1)
            if let spki { bySPKI[spki] = .some(certificate) }
            if let certificate { certificates.insert(certificate) }
        }

        var added: [Pin] = []
        var upgraded: [Pin] = []
        var skipped: [Pin] = []
        for pin in pins {
            let certificate = pin.certificateSHA256?.bytes
            if let spki = pin.spkiSHA256?.bytes, let existing = bySPKI[spki] {
                // The key is pinned; it gains the certificate hash it lacks.
                if existing == nil, let certificate, !certificates.contains(certificate) {
                    try db.execute("""
                        UPDATE pin SET certificate_sha256 = ?, not_after = coalesce(?, not_after), source = ?,
                                       label = CASE WHEN label = '' THEN ? ELSE label END
                        WHERE host_id = ? AND spki_sha256 = ?
                        """, [certificate, StoredRows.storedNotAfter(pin.notAfter), pin.source.storedForm, pin.label, hostID, spki])
                    bySPKI[spki] = .some(certificate)
                    certificates.insert(certificate)
                    upgraded.append(pin)
                } else {
                    skipped.append(pin)
                }
                continue
            }
            if let certificate, certificates.contains(certificate) {
                // Pinned by certificate hash alone; it gains the key when this pin carries it.
                if let spki = pin.spkiSHA256?.bytes {
                    let changed = try db.execute("""
                        UPDATE pin SET spki_sha256 = ?, spki_der = ?, not_after = coalesce(?, not_after), source = ?,
                                       label = CASE WHEN label = '' THEN ? ELSE label END
                        WHERE host_id = ? AND certificate_sha256 = ? AND spki_sha256 IS NULL
                        """, [spki, pin.subjectPublicKeyInfo, StoredRows.storedNotAfter(pin.notAfter),
                                         pin.source.storedForm, pin.label, hostID, certificate])
                    if changed > 0 {
                        bySPKI[spki] = .some(certificate)
                        upgraded.append(pin)
                        continue
                    }
                }
                skipped.append(pin)
                continue
            }
            try PinStore.insert(pin, hostID: hostID, at: change.now, db)
            if let spki = pin.spkiSHA256?.bytes { bySPKI[spki] = .some(certificate) }
            if let certificate { certificates.insert(certificate) }
            added.append(pin)
        }
        guard !added.isEmpty || !upgraded.isEmpty else {
            throw StoreError(.pinExists, pins.count == 1
                ? "Host \(hostname) of customer '\(owner.name)' already has the pin \(pins[0].displayName). Nothing was changed."
                : "Host \(hostname) of customer '\(owner.name)' already has all \(pins.count) given pins. Nothing was changed.")
        }
        try change.requireLegacyBackup(ofHost: hostID, hostname: hostname, customer: owner, edit: .addition(usableBefore: legacyUsableBefore))
        try change.requireScheduleKeepsHostPinned(hostID: hostID, hostname: hostname, customer: owner, listedBefore: listedBefore)

        func describe(_ pins: [Pin]) -> String {
            pins.map { "\($0.displayName) (\($0.label.isEmpty ? "no label" : $0.label); \($0.source.storedForm)\($0.window.map { "; publish window \($0)" } ?? ""))" }.joined(separator: ", ")
        }
        var parts: [String] = []
        if !added.isEmpty { parts.append("added \(added.count) pin(s): " + describe(added)) }
        if !upgraded.isEmpty { parts.append("added the certificate hash or key to \(upgraded.count) pin(s): " + describe(upgraded)) }
        if !skipped.isEmpty { parts.append("skipped \(skipped.count) already present: " + skipped.map(\.displayName).joined(separator: ", ")) }
        if let liveCheck { parts.append(liveCheck.auditNote) }
        if let note { parts.append(note) }
        let version = try change.recordChange(of: owner, .pinsAdded, "\(hostname): " + parts.joined(separator: "; "))
        return PinChange(customer: owner.name, hostname: hostname, changed: added.compactMap(\.sortKey), skipped: skipped.compactMap(\.sortKey),
                         pinCount: try change.pinCount(ofHost: hostID), version: version, upgraded: upgraded.compactMap(\.sortKey))
    }
}

extension PinStore {

    /// Inserts one pin row; the caller has checked that the host does not have it.
    static func insert(_ pin: Pin, hostID: Int64, at now: Date, _ db: any StoreConnection) throws {
        try db.execute("""
            INSERT INTO pin (host_id, spki_sha256, spki_der, certificate_sha256, label, source, not_after, created_at,
                             window_not_before, window_not_after, withheld)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [
                hostID, pin.spkiSHA256?.bytes, pin.subjectPublicKeyInfo,
                pin.certificateSHA256?.bytes, pin.label, pin.source.storedForm,
                StoredRows.storedNotAfter(pin.notAfter), now,
                StoredRows.storedSeconds(pin.window?.notBefore), StoredRows.storedSeconds(pin.window?.notAfter),
                Int64(pin.isPublished(at: now) ? 0 : 1),
            ])
    }

    /// Removes one pin from a host: the pin with this SPKI hash, or the certificate-only pin with this
    /// certificate hash.
    ///
    /// Removing a host's last pin stops the host being published (bundles carry only hosts with pins), so a
    /// covering include-subdomains parent's pins, or none, apply to it; it is refused unless
    /// `allowRemovingLastPin` is true.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, `.pinNotFound`, `.lastPinOfHost`, or
    ///   `.tooFewLegacyPins` when the customer serves legacy clients and the removal leaves the host with fewer
    ///   than two pins they can use.
    @discardableResult
    public func removePin(
        _ spkiSHA256: SHA256Fingerprint, from hostname: Hostname, of customer: CustomerName, allowRemovingLastPin: Bool = false,
        liveCheck: LiveCheckRecord? = nil, unlessReviewRequired: Bool = false, note: String? = nil, actor: String
    ) throws -> PinChange {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            if unlessReviewRequired { try change.requireNoReview(of: customer) }
            return try change.removePin(spkiSHA256, from: hostname, of: customer, allowRemovingLastPin: allowRemovingLastPin, liveCheck: liveCheck, note: note)
        }
    }
}

extension ChangeRecorder {
    /// `PinStore.removePin` inside a transaction that is already open; `note` ends the audit entry.
    func removePin(_ spkiSHA256: SHA256Fingerprint, from hostname: Hostname, of customer: CustomerName, allowRemovingLastPin: Bool, liveCheck: LiveCheckRecord?, note: String? = nil) throws -> PinChange {
        let change = self
        let owner = try change.customer(customer)
        let (hostID, current) = try change.host(hostname, of: owner)
        try change.requireUnchanged(hostID: hostID, current: current, since: liveCheck)
        // A certificate-only pin is named by its certificate hash.
        let match = "host_id = ? AND (spki_sha256 = ? OR (spki_sha256 IS NULL AND certificate_sha256 = ?))"
        let matchArguments: [any SQLArgument] = [hostID, spkiSHA256.bytes, spkiSHA256.bytes]
        let label = try db.fetchValue(String.self, "SELECT label FROM pin WHERE \(match)", matchArguments)
        guard let label else {
            throw StoreError(.pinNotFound, "Host \(hostname) of customer '\(owner.name)' has no pin \(spkiSHA256.base64). List its pins with 'pinset pin list \(owner.name) \(hostname)'.")
        }
        let count = try change.pinCount(ofHost: hostID)
        if count == 1 && !allowRemovingLastPin {
            throw StoreError(.lastPinOfHost, "\(spkiSHA256.base64) is the last pin of \(hostname); removing it would stop publishing the host, and apps would then apply a covering include-subdomains parent's pins to it, or none. If the new certificate has a new key, add its pin first and then remove this one. If it keeps this key, this pin already matches it: keep it (the key, not the certificate, is pinned). To stop pinning the host, remove it with 'pinset host remove', or pass --allow-last-pin.")
        }
        let legacyUsableBefore = owner.servesLegacyClients ? try change.legacyUsablePinCount(ofHost: hostID) : 0
        let listedBefore = try change.publishedPinCount(ofHost: hostID)
        try db.execute("DELETE FROM pin WHERE \(match)", matchArguments)
        try change.requireLegacyBackup(ofHost: hostID, hostname: hostname, customer: owner, edit: .removal(usableBefore: legacyUsableBefore))
        if !allowRemovingLastPin {
            try change.requireScheduleKeepsHostPinned(hostID: hostID, hostname: hostname, customer: owner, listedBefore: listedBefore)
        }
        let version = try change.recordChange(
            of: owner, .pinRemoved,
            "\(hostname): removed pin \(spkiSHA256.base64) (\(label.isEmpty ? "no label" : label)); \(count - 1) pin(s) left"
                + (liveCheck.map { "; \($0.auditNote)" } ?? "") + (note.map { "; \($0)" } ?? "")
        )
        return PinChange(customer: owner.name, hostname: hostname, changed: [spkiSHA256], skipped: [],
                         pinCount: count - 1, version: version)
    }
}
