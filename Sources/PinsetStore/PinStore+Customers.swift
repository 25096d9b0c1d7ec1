import Foundation
import GRDB
import PinsetCore

extension PinStore {
    /// Adds a customer with no hosts.
    ///
    /// Its first version is one above the highest version the name (ignoring case) ever had, so a customer
    /// that is removed and added again never reuses a version: clients holding the old customer's bundle
    /// accept the new one, and no old bundle can be replayed as newer.
    ///
    /// - Throws: `StoreError.customerExists` if a customer of that name, ignoring case, exists.
    public func addCustomer(_ name: CustomerName, actor: String) throws {
        try pool.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            if let existing = try String.fetchOne(db, sql: "SELECT name FROM customer WHERE name = ?", arguments: [name.rawValue]) {
                let sameSpelling = existing == name.rawValue
                throw StoreError(.customerExists, sameSpelling
                    ? "Customer '\(existing)' already exists. List customers with 'pinset customer list'."
                    : "Customer '\(existing)' already exists, and names are unique ignoring case, so '\(name)' cannot be added. Use '\(existing)' or choose another name.")
            }
            let version = try change.firstVersion(for: name)
            try db.execute(sql: "INSERT INTO customer (name, version, created_at, updated_at) VALUES (?, ?, ?, ?)",
                           arguments: [name.rawValue, version, change.now, change.now])
            try change.recordMembership(of: name, .customerAdded, "added customer '\(name)'", version: version)
        }
    }

    /// Removes a customer with all its hosts and pins. Its audit history stays, and the highest version it
    /// reached is remembered (see `addCustomer`).
    ///
    /// - Throws: `StoreError.customerNotFound`.
    public func removeCustomer(_ name: CustomerName, actor: String) throws {
        try pool.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let customer = try change.customer(name)
            let hostCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM host WHERE customer_id = ?", arguments: [customer.id]) ?? 0
            let pinCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM pin JOIN host ON pin.host_id = host.id WHERE host.customer_id = ?", arguments: [customer.id]) ?? 0
            // Hosts and pins go with it: ON DELETE CASCADE.
            try db.execute(sql: "DELETE FROM customer WHERE id = ?", arguments: [customer.id])
            try change.recordMembership(
                of: customer.name, .customerRemoved,
                "removed customer '\(customer.name)' at version \(customer.version) with \(hostCount) host(s) and \(pinCount) pin(s)",
                version: 0
            )
        }
    }
}
