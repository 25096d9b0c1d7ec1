import Foundation
import PinsetCore

extension AuditAction {
    public static let customerImported = AuditAction(rawValue: "customer.import")
}

extension PinStore {
    /// Creates every customer with its hosts, pins and signing-identity record in ONE transaction: if any of
    /// them exists already or any row is refused, nothing is created.
    ///
    /// - Throws: `StoreError.customerExists`, `.invalidInput` (duplicate host, pin without hashes, port 0).
    public func importCustomers(_ imports: [CustomerImport], actor: String) throws {
        for customer in imports {
            for host in customer.hosts {
                try Self.validate(port: host.port, hostname: host.hostname)
                for pin in host.pins where pin.spkiSHA256 == nil && pin.certificateSHA256 == nil {
                    throw StoreError(.invalidInput, "A pin of \(customer.name)/\(host.hostname) has neither an SPKI hash nor a certificate hash.")
                }
            }
        }
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            for customer in imports {
                let (customerID, version) = try Self.insertCustomer(customer.name, servesLegacyClients: customer.servesLegacyClients, change: change)
                if let identity = customer.ownSigningIdentity {
                    try Self.recordOwnSigningIdentity(identity, customerID: customerID, change: change)
                }
                var pinCount = 0
                for host in customer.hosts {
                    let hostID: Int64
                    do {
                        hostID = try db.insertReturningID("""
                            INSERT INTO host (customer_id, hostname, published_hostname, port, include_subdomains, created_at) VALUES (?, ?, ?, ?, ?, ?)
                            """, [customerID, host.hostname.rawValue, host.hostname.hasMixedCase ? host.hostname.spelling : nil,
                                             Int64(host.port), host.includeSubdomains, change.now])
                    } catch is SQLConstraintViolation {
                        throw StoreError(.invalidInput, "\(customer.origin): host \(host.hostname) is listed twice for '\(customer.name)'.")
                    }
                    for pin in host.pins {
                        do {
                            try Self.insert(pin, hostID: hostID, at: change.now, db)
                        } catch is SQLConstraintViolation {
                            throw StoreError(.invalidInput, "\(customer.origin): \(customer.name)/\(host.hostname) lists the pin \(pin.displayName) twice.")
                        }
                        pinCount += 1
                    }
                }
                let identity = customer.ownSigningIdentity.map { "its own signing identity: \($0.details)" } ?? "the default signing identity"
                try change.recordMembership(
                    of: customer.name, .customerImported,
                    "imported customer '\(customer.name)' from \(customer.origin) with \(customer.hosts.count) host(s), \(pinCount) pin(s) and \(identity)",
                    version: version
                )
            }
        }
    }
}
