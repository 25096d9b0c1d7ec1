import Foundation
import PinsetCore

extension AuditAction {
    public static let signerFloorRaised = AuditAction(rawValue: "identity.floor")
}

/// What raising a revocation floor did.
public struct SignerFloorRaise: Sendable, Equatable {
    /// The floor before the call, `nil` when none was set.
    public var previousFloor: Int64?
    /// The customers whose version was raised: those signed by the identity, none when the floor already was as high.
    public var customers: [CustomerName]
}

extension PinStore {
    /// The revocation floor (Unix seconds) of `customer`'s own signing identity or, with `nil`, of the
    /// deployment's default identity; `nil` while none is set.
    ///
    /// - Throws: `StoreError.customerNotFound`; `revocationFloorRefused` when the customer signs with the default identity.
    public func signersNotBefore(of customer: CustomerName?) throws -> Int64? {
        try database.read { db in try Self.currentFloor(db, customer: customer).floor }
    }

    /// Raises the revocation floor of `customer`'s own signing identity or, with `nil`, of the deployment's
    /// default identity, to `floor`. Every customer signed by that identity gets an audit entry and a new
    /// content version, since the floor is part of the content its bundles carry.
    ///
    /// A floor equal to the current one changes nothing and returns no customers.
    ///
    /// - Returns: the floor before, read in the same transaction, and the customers whose version was raised.
    /// - Throws: `StoreError` `invalidInput` for a negative floor; `revocationFloorRefused` for a floor below the
    ///   current one (a floor never goes down: clients that accepted it keep it) or a customer that signs with the
    ///   default identity; `customerNotFound`.
    @discardableResult
    public func raiseSignersNotBefore(to floor: Int64, for customer: CustomerName?, details: String, actor: String) throws -> SignerFloorRaise {
        guard floor >= 0 else {
            throw StoreError(.invalidInput, "The revocation floor \(floor) is negative; give Unix seconds.")
        }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let (current, customerID) = try Self.currentFloor(db, customer: customer)
            if let current, floor < current {
                throw StoreError(.revocationFloorRefused, "The revocation floor of \(Self.identityLabel(customer)) is \(current) (\(Self.format(current))); \(floor) (\(Self.format(floor))) would lower it, and a floor never goes down: clients that accepted it keep refusing older signers. Nothing was changed.")
            }
            if floor == current { return SignerFloorRaise(previousFloor: current, customers: []) }
            if let customerID {
                try db.execute("UPDATE customer_signing_identity SET signers_not_before = ? WHERE customer_id = ?", [floor, customerID])
            } else {
                try db.execute("""
                    INSERT INTO default_signing_identity (id, signers_not_before, updated_at) VALUES (1, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET signers_not_before = excluded.signers_not_before, updated_at = excluded.updated_at
                    """, [floor, change.now])
            }
            let rows = try Self.customersSigned(by: customer, change)
            for row in rows {
                try change.recordChange(of: row, .signerFloorRaised, "revocation floor signers-not-before \(floor) (\(Self.format(floor))): " + details)
            }
            return SignerFloorRaise(previousFloor: current, customers: rows.map(\.name))
        }
    }

    /// The floor and, for a customer, the id of its own identity's row.
    private static func currentFloor(_ db: any StoreConnection, customer: CustomerName?) throws -> (floor: Int64?, customerID: Int64?) {
        guard let customer else {
            return (try db.fetchValue(Int64.self, "SELECT signers_not_before FROM default_signing_identity WHERE id = 1"), nil)
        }
        let row = try db.fetchOne("""
            SELECT customer.id, customer.name, customer_signing_identity.customer_id, customer_signing_identity.signers_not_before
            FROM customer LEFT JOIN customer_signing_identity ON customer_signing_identity.customer_id = customer.id
            WHERE customer.name = ?
            """, [customer.rawValue]) { row in
            (customerID: try row.decode(Int64.self, atIndex: 0), hasOwnIdentity: try row.decode(Int64?.self, atIndex: 2) != nil,
             floor: try row.decode(Int64?.self, atIndex: 3))
        }
        guard let row else { throw StoreError.customerNotFound(customer.rawValue) }
        guard row.hasOwnIdentity else {
            throw StoreError(.revocationFloorRefused, "Customer '\(customer)' signs with the deployment's default identity, whose revocation floor applies to it. Leave out --customer to set that one.")
        }
        return (row.floor, row.customerID)
    }

    private static func identityLabel(_ customer: CustomerName?) -> String {
        customer.map { "customer '\($0)'s own signing identity" } ?? "the default signing identity"
    }

    private static func format(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }
}
