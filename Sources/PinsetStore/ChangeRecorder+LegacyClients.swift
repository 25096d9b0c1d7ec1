import Foundation
import PinsetCore

extension ChangeRecorder {
    /// The host's pins as stored now, inside this transaction.
    func pins(ofHost hostID: Int64) throws -> [Pin] {
        var decoder = StoredRows.PinDecoder()
        return try db.fetchAll("SELECT \(StoredRows.pinColumns) FROM pin WHERE pin.host_id = ?", [hostID]) { try decoder.pin($0).pin }
    }

    /// How many of the host's pins a legacy GCX client can match at the time of this change.
    func legacyUsablePinCount(ofHost hostID: Int64) throws -> Int {
        try pins(ofHost: hostID).filter { $0.isPublished(at: now) && $0.isUsableByLegacyClients(at: now) }.count
    }

    /// The pin change `requireLegacyBackup` judges.
    enum LegacyPinEdit {
        /// A host added with its pins: it must come with two that legacy clients can use.
        case newHost
        /// Pins added to an existing host that had `usableBefore` usable pins.
        case addition(usableBefore: Int)
        /// A pin removed from a host that had `usableBefore` usable pins.
        case removal(usableBefore: Int)
    }

    /// For a customer serving legacy clients, refuses (and so rolls back) a pin change after which the host
    /// has fewer than two pins those clients can use, unless it moves the host towards two: an addition that
    /// raises the number of usable pins (the caller warns that the host is still short), or a removal that
    /// does not lower it, so pins invisible to legacy clients can still be cleaned up from a short host.
    func requireLegacyBackup(ofHost hostID: Int64, hostname: Hostname, customer: CustomerRow, edit: LegacyPinEdit) throws {
        guard customer.servesLegacyClients else { return }
        let usable = try legacyUsablePinCount(ofHost: hostID)
        let minimum = HostPins.minimumRecommendedPins
        guard usable < minimum else { return }
        let usableKinds = "'pinset pin add' with --certificate, --from-host, --certificate-sha256 or an RSA --public-key"
        let fix: String
        switch edit {
        case .newHost:
            fix = " Give the host at least \(minimum) such pins as it is added: 'pinset host add --certificate FILE' (repeatable; every certificate of each file is pinned)"
        case .addition(let usableBefore):
            if usable > usableBefore { return }
            fix = " None of the given pins is one they can use: add such pins with \(usableKinds)"
        case .removal(let usableBefore):
            if usable >= usableBefore { return }
            fix = " Add the replacement certificate first with \(usableKinds), then remove this pin"
        }
        let why = "Customer '\(customer.name)' serves legacy GCX clients, which match only the SHA-256 of an unexpired certificate (fp) or an RSA public key (pk), never a bare SPKI hash or an EC key; after this change \(hostname) would have \(usable) pin\(usable == 1 ? "" : "s") they can use, fewer than \(minimum). Nothing was changed."
        throw StoreError(.tooFewLegacyPins, why + fix + ", or turn the protection off with 'pinset customer update \(customer.name) --no-legacy-clients'.")
    }
}
