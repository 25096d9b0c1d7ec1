import Foundation
import PinsetCore

/// A host the trust server cannot reach, and why.
public struct UnmonitoredHost: Hashable, Sendable {
    public var customer: CustomerName
    public var hostname: Hostname
    public var reason: String

    public init(customer: CustomerName, hostname: Hostname, reason: String) {
        self.customer = customer
        self.hostname = hostname
        self.reason = reason
    }
}

extension PinStore {
    /// Marks a host as one the trust server cannot reach (`reason` set) or as reachable again (`nil`).
    ///
    /// An unmonitored host's pin edits are not checked against a live chain; the mark and its reason are in
    /// the audit log. The bundle does not change, so the customer's version does not move.
    ///
    /// - Returns: `false` when the host already had this setting.
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, or `.invalidInput` for an empty, too long or
    ///   control-character reason.
    @discardableResult
    public func setUnmonitored(_ hostname: Hostname, of customer: CustomerName, reason: String?, actor: String) throws -> Bool {
        // Held to the rule of every reason an admin writes; an empty one says nothing to whoever reads the log.
        let reason = try reason.map { try Self.validatedReviewText($0, what: "reason a host is unmonitored (e.g. --unmonitored 'internal network, checked from the office VPN')", required: true) }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            let current = try db.fetchValue(String.self, "SELECT unmonitored_reason FROM host WHERE id = ?", [hostID])
            guard current != reason else { return false }
            try db.execute("UPDATE host SET unmonitored_reason = ? WHERE id = ?", [reason, hostID])
            let details = reason.map { "\(hostname): unmonitored (live-chain checks skipped): \($0)" } ?? "\(hostname): monitored again (live-chain checks on)"
            try change.recordMembership(of: owner.name, .hostUpdated, details, version: owner.version)
            return true
        }
    }

    /// Hosts marked unmonitored, of one customer or all, with their reasons.
    public func unmonitoredHosts(of customer: CustomerName? = nil) throws -> [UnmonitoredHost] {
        try database.read { db in
            try db.fetchAll("""
                SELECT customer.name, coalesce(host.published_hostname, host.hostname), host.unmonitored_reason
                FROM host JOIN customer ON customer.id = host.customer_id
                WHERE host.unmonitored_reason IS NOT NULL \(customer == nil ? "" : "AND customer.name = ?")
                ORDER BY customer.name COLLATE \(db.dialect.binaryCollation), host.hostname COLLATE \(db.dialect.binaryCollation)
                """, customer.map { [$0.rawValue] } ?? []) { row in
                let hostname: String = try row.decode(atIndex: 1)
                guard let parsed = try? Hostname(hostname) else {
                    throw StoreError(.corruptData, "The stored host name '\(hostname)' is not valid. Fix or remove the row with the sqlite3 tool.")
                }
                return UnmonitoredHost(customer: try StoredRows.customerName(row.decode(atIndex: 0)), hostname: parsed, reason: try row.decode(atIndex: 2))
            }
        }
    }
}

extension ChangeRecorder {
    /// Refuses the edit when the host's port or pins differ from what the live check saw: another change was
    /// committed in between, and the result that passed is not the one this edit would commit.
    func requireUnchanged(hostID: Int64, current: HostPins, since record: LiveCheckRecord?) throws {
        guard let record else { return }
        var decoder = StoredRows.PinDecoder()
        let stored = try db.fetchAll("SELECT \(StoredRows.pinColumns) FROM pin WHERE host_id = ?", [hostID]) { try decoder.pin($0).pin }
        func identities(_ pins: [Pin]) -> Set<String> {
            Set(pins.map { "\($0.spkiSHA256?.base64 ?? "-") \($0.certificateSHA256?.hex ?? "-")" })
        }
        guard current.port == record.checkedHost.port, current.includeSubdomains == record.checkedHost.includeSubdomains,
              identities(stored) == identities(record.checkedHost.storedPins) else {
            throw StoreError(.changedSinceCheck, "\(current.hostname) changed while its live chain was being checked (another edit was committed). Nothing was changed; run the command again.")
        }
    }
}
