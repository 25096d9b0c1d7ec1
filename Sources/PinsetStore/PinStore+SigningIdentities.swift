import Foundation
import PinsetCore

extension AuditAction {
    public static let signingIdentitySet = AuditAction(rawValue: "identity.set")
    public static let signingIdentityRotated = AuditAction(rawValue: "identity.rotate")
    public static let signingIdentityCleared = AuditAction(rawValue: "identity.clear")
}

/// What the store records of a customer's own signing identity: the key itself is a file, never stored here.
public struct OwnSigningIdentityRecord: Hashable, Sendable {
    /// `p256`, `p384`, `rsa4096`, …
    public var keyType: String
    /// For the audit log: where the key came from and the certificate's SHA-256.
    public var details: String

    public init(keyType: String, details: String) {
        self.keyType = keyType
        self.details = details
    }
}

extension PinStore {
    /// Which key signs the customer's bundles, with the key type recorded for an own identity.
    ///
    /// - Throws: `StoreError.customerNotFound`.
    public func signerAssignment(of name: CustomerName) throws -> (customer: CustomerName, signer: SignerAssignment, keyType: String?) {
        try database.read { db in
            let found = try db.fetchOne("""
                SELECT customer.name, customer_signing_identity.key_type FROM customer
                LEFT JOIN customer_signing_identity ON customer_signing_identity.customer_id = customer.id
                WHERE customer.name = ?
                """, [name.rawValue]) { row in
                (name: try StoredRows.customerName(row.decode(atIndex: 0)), keyType: try row.decode(String?.self, atIndex: 1))
            }
            guard let found else { throw StoreError.customerNotFound(name.rawValue) }
            return (found.name, found.keyType == nil ? .deploymentDefault : .customerOwn, found.keyType)
        }
    }

    /// Records that the customer now signs with its own (new) identity, whose files are already in place.
    /// Bumps the version so that a bundle signed with the new identity is published at once.
    ///
    /// - Throws: `StoreError.customerNotFound`.
    @discardableResult
    public func setOwnSigningIdentity(of name: CustomerName, _ identity: OwnSigningIdentityRecord, actor: String) throws -> Int64 {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let customer = try change.customer(name)
            let existed = try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM customer_signing_identity WHERE customer_id = ?)", [customer.id]) ?? false
            try db.execute("""
                INSERT INTO customer_signing_identity (customer_id, key_type, created_at) VALUES (?, ?, ?)
                ON CONFLICT (customer_id) DO UPDATE SET key_type = excluded.key_type, created_at = excluded.created_at
                """, [customer.id, identity.keyType, change.now])
            return try change.recordChange(
                of: customer, existed ? .signingIdentityRotated : .signingIdentitySet,
                (existed ? "replaced its own signing identity: " : "now signs with its own signing identity: ") + identity.details
            )
        }
    }

    /// Records that the customer signs with its own key (the key itself is a file, never stored here).
    static func recordOwnSigningIdentity(_ identity: OwnSigningIdentityRecord, customerID: Int64, change: ChangeRecorder) throws {
        try change.db.execute("INSERT INTO customer_signing_identity (customer_id, key_type, created_at) VALUES (?, ?, ?)",
                              [customerID, identity.keyType, change.now])
    }
}
