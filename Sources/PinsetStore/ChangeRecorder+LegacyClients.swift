import Foundation
import GRDB
import PinsetCore

extension ChangeRecorder {
    /// The host's pins as stored now, inside this transaction.
    func pins(ofHost hostID: Int64) throws -> [Pin] {
        var decoder = StoredRows.PinDecoder()
        let rows = try Row.fetchCursor(db, sql: "SELECT \(StoredRows.pinColumns) FROM pin WHERE pin.host_id = ?", arguments: [hostID])
        var pins: [Pin] = []
        while let row = try rows.next() { pins.append(try decoder.pin(row).pin) }
        return pins
    }

    /// How many of the host's pins a legacy GCX client can match.
    func legacyUsablePinCount(ofHost hostID: Int64) throws -> Int {
        try pins(ofHost: hostID).filter(\.isUsableByLegacyClients).count
    }

    /// For a customer serving legacy clients, refuses (and so rolls back) a pin change after which the host
    /// has fewer than two pins those clients can use. A removal is refused only when it lowers that number,
    /// so pins invisible to legacy clients can still be cleaned up from a host that is already short.
    ///
    /// - Parameter usableBefore: the count before a removal; `nil` for an addition, which must reach two.
    func requireLegacyBackup(ofHost hostID: Int64, hostname: Hostname, customer: CustomerRow, usableBefore: Int?) throws {
        guard customer.servesLegacyClients else { return }
        let usable = try legacyUsablePinCount(ofHost: hostID)
        let minimum = HostPins.minimumRecommendedPins
        guard usable < minimum else { return }
        if let usableBefore, usable >= usableBefore { return }
        let why = "Customer '\(customer.name)' serves legacy GCX clients, which match only a certificate's SHA-256 (fp) or an RSA public key (pk), never a bare SPKI hash or an EC key; after this change \(hostname) would have \(usable) pin\(usable == 1 ? "" : "s") they can use, fewer than \(minimum). Nothing was changed."
        let fix = usableBefore == nil
            ? " Give at least \(minimum) such pins in one 'pinset pin add', or with the host in 'pinset host add --certificate' (--certificate for each certificate, --from-host for a live chain, or RSA --public-key)"
            : " Add the replacement certificate first (--certificate or --from-host), then remove this pin"
        throw StoreError(.tooFewLegacyPins, why + fix + ", or turn the protection off with 'pinset customer update \(customer.name) --no-legacy-clients'.")
    }
}
