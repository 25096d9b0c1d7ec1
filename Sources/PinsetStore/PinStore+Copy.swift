import Foundation
import PinsetCore

/// What `PinStore.copy` moved.
public struct StoreCopyReport: Sendable, Hashable {
    /// Rows copied per table.
    public var rows: [String: Int]
    /// Every customer with its content version, the same in both databases.
    public var customers: [CustomerSummary]
    public var changeCounter: Int64
}

extension PinStore {
    /// Copies a whole deployment's data into an empty database of any backend: customers, hosts, pins, signing
    /// identities, revocation floors, high-water marks and the whole audit log, with the same ids and the same
    /// content versions, so apps that accepted a version from the old store accept the new store's bundles.
    ///
    /// The source is read in one snapshot and the target written in one transaction: it is copied completely
    /// or not at all. Edits made to the source afterwards are not carried over, so stop the admin tools (the
    /// servers may keep serving) until the servers point at the target.
    ///
    /// - Throws: `StoreError.invalidInput` when any table of the target holds a row (nothing is written; the
    ///   message names the table), or when source and target are the same; errors opening either store.
    public static func copy(from source: StoreLocation, to target: StoreLocation) throws -> StoreCopyReport {
        guard source != target else {
            throw StoreError(.invalidInput, "The source and target are the same database (\(source)). Give the current database as --from and a new, empty one as --to.")
        }
        let from = try PinStore(location: source, readOnly: true)
        defer { try? from.close() }
        let to = try PinStore(location: target)
        defer { try? to.close() }
        let counts = try StoreCopier.copy(from: from.database, to: to.database)
        let copied = try to.customers()
        let original = try from.customers()
        guard copied.map(\.name) == original.map(\.name), copied.map(\.version) == original.map(\.version) else {
            throw StoreError(.corruptData, "The copy in \(target) does not hold the same customers and versions as \(source). Drop the target database and copy again.")
        }
        return StoreCopyReport(rows: counts.rows, customers: copied, changeCounter: counts.changeCounter)
    }
}
