import Foundation
import PinsetCore

extension PinStore {
    /// Adds a customer with no hosts.
    ///
    /// Its first version is one above the highest version the name (ignoring case) ever had, so a customer
    /// that is removed and added again never reuses a version: clients holding the old customer's bundle
    /// accept the new one, and no old bundle can be replayed as newer.
    ///
    /// - Parameter servesLegacyClients: the customer's apps include legacy GCX clients (see
    ///   `setServesLegacyClients`).
    /// - Throws: `StoreError.customerExists` if a customer of that name, ignoring case, exists.
    /// - Parameter requiresReview: pin edits by named admins need a second admin from the start, in the same
    ///   transaction (see `setRequiresReview`).
    public func addCustomer(
        _ name: CustomerName, servesLegacyClients: Bool = false, ownSigningIdentity: OwnSigningIdentityRecord? = nil, requiresReview: Bool = false,
        actor: String
    ) throws {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let (customerID, version) = try Self.insertCustomer(name, servesLegacyClients: servesLegacyClients, change: change)
            if requiresReview {
                try db.execute("INSERT INTO review_required (customer_id, since, set_by) VALUES (?, ?, ?)", [customerID, change.now, actor])
            }
            var details = "added customer '\(name)'\(servesLegacyClients ? ", serves legacy clients" : "")\(requiresReview ? ", pin edits need a second admin's approval" : "")"
            if let ownSigningIdentity {
                try Self.recordOwnSigningIdentity(ownSigningIdentity, customerID: customerID, change: change)
                details += " with its own signing identity: \(ownSigningIdentity.details)"
            }
            try change.recordMembership(of: name, .customerAdded, details, version: version)
        }
    }

    /// Inserts the customer row at its first version; the caller records the audit entry. Returns the new
    /// customer's id and version.
    static func insertCustomer(_ name: CustomerName, servesLegacyClients: Bool, change: ChangeRecorder) throws -> (id: Int64, version: Int64) {
        let db = change.db
        if let existing = try db.fetchValue(String.self, "SELECT name FROM customer WHERE name = ?", [name.rawValue]) {
            let sameSpelling = existing == name.rawValue
            throw StoreError(.customerExists, sameSpelling
                ? "Customer '\(existing)' already exists. List customers with 'pinset customer list'."
                : "Customer '\(existing)' already exists, and names are unique ignoring case, so '\(name)' cannot be added. Use '\(existing)' or choose another name.")
        }
        let version = try change.firstVersion(for: name)
        let id = try db.insertReturningID("INSERT INTO customer (name, version, legacy_clients, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                                          [name.rawValue, version, servesLegacyClients, change.now, change.now])
        return (id, version)
    }

    /// Marks whether the customer's apps include legacy GCX clients. While set, every pin edit that would
    /// leave a host with fewer than two pins those clients can use is refused (`StoreError.tooFewLegacyPins`).
    /// Setting it does not check the existing hosts: `legacyDeficientHosts` lists those to fix.
    ///
    /// - Returns: `false` when the customer already had this setting; then nothing is written.
    /// - Throws: `StoreError.customerNotFound`.
    @discardableResult
    public func setServesLegacyClients(_ serves: Bool, for name: CustomerName, actor: String) throws -> Bool {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            return try change.setServesLegacyClients(serves, of: try change.customer(name))
        }
    }

    /// Removes a customer with all its hosts and pins. Its audit history stays, and the highest version it
    /// reached is remembered (see `addCustomer`).
    ///
    /// - Throws: `StoreError.customerNotFound`.
    public func removeCustomer(_ name: CustomerName, actor: String) throws {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let customer = try change.customer(name)
            let hostCount = try db.fetchValue(Int.self, "SELECT count(*) FROM host WHERE customer_id = ?", [customer.id]) ?? 0
            let pinCount = try db.fetchValue(Int.self, "SELECT count(*) FROM pin JOIN host ON pin.host_id = host.id WHERE host.customer_id = ?", [customer.id]) ?? 0
            // Hosts and pins go with it: ON DELETE CASCADE.
            try db.execute("DELETE FROM customer WHERE id = ?", [customer.id])
            try change.recordMembership(
                of: customer.name, .customerRemoved,
                "removed customer '\(customer.name)' at version \(customer.version) with \(hostCount) host(s) and \(pinCount) pin(s)",
                version: 0
            )
        }
    }
}

extension ChangeRecorder {
    /// Returns `false` when the customer already had this setting; then nothing is written.
    func setServesLegacyClients(_ serves: Bool, of customer: CustomerRow) throws -> Bool {
        guard customer.servesLegacyClients != serves else { return false }
        try db.execute("UPDATE customer SET legacy_clients = ? WHERE id = ?", [serves, customer.id])
        // Only which pin edits are refused changes; bundles stay the same.
        try recordSettingChange(of: customer, .customerUpdated, "legacy clients \(PinStore.onOff(customer.servesLegacyClients)) -> \(PinStore.onOff(serves))")
        return true
    }
}
