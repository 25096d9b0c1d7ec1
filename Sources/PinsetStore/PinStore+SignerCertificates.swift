import Foundation
import PinsetCore

extension AuditAction {
    public static let signerCertificateInstalled = AuditAction(rawValue: "identity.signer")
}

extension PinStore {
    /// Records that a new signer certificate (issued by the same root) now signs the bundles of `customer` —
    /// or, with `nil`, of every customer that signs with the deployment's default identity. Each of those
    /// customers gets an audit entry, and the change counter moves, so running servers re-sign at once.
    ///
    /// The content version stays: the pins are the same, only the signature is new. Instances behind one load
    /// balancer re-sign a moment apart (and each installs its own signer), so a new version would make a
    /// client that got the new bundle from one instance refuse the other's as a rollback until it re-signs.
    ///
    /// - Returns: the customers whose bundles the new certificate signs.
    /// - Throws: `StoreError.customerNotFound`.
    @discardableResult
    public func recordSignerCertificateInstalled(for customer: CustomerName?, details: String, actor: String) throws -> [CustomerName] {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let rows = try Self.customersSigned(by: customer, change)
            for row in rows {
                try change.recordSettingChange(of: row, .signerCertificateInstalled, "new signer certificate: " + details)
            }
            return rows.map(\.name)
        }
    }

    /// The customers whose bundles `customer`'s own identity signs (itself) or, with `nil`, the deployment's
    /// default identity signs (every customer without an own one): those a change to that identity affects.
    static func customersSigned(by customer: CustomerName?, _ change: ChangeRecorder) throws -> [CustomerRow] {
        if let customer { return [try change.customer(customer)] }
        return try change.db.fetchAll("""
            SELECT \(StoredRows.customerColumns) FROM customer
            WHERE NOT EXISTS (SELECT 1 FROM customer_signing_identity WHERE customer_id = customer.id)
            ORDER BY name COLLATE \(change.db.dialect.binaryCollation)
            """) { try StoredRows.customerRow($0) }
    }
}
