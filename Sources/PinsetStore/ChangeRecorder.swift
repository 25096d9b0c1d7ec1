import Foundation
import PinsetCore

/// The bookkeeping every write does inside its transaction: look up what it changes, then increase the
/// customer's content version, append that version's entry to the transparency log, append the audit entry and
/// bump the change counter.
///
/// Keeping these steps in one place is what makes "every change bumps the version, is logged, is audited and is
/// seen by the server" hold for every write: an edit, its version and its log entry commit together or not at all.
///
/// A new content version is max(previous + 1, the name's high-water mark + 1, now in milliseconds since
/// 1970). The clock term is what keeps versions increasing across databases: a re-created database, or one
/// restored from a backup, starts above every version an earlier database served (as long as that one's
/// versions did not run ahead of the clock, which takes more than a thousand changes a second), so apps
/// never refuse its bundles as rollbacks. The other two terms keep versions increasing when the clock stalls
/// or steps back.
struct ChangeRecorder {
    /// The largest version: 2^53 - 1, the largest integer every JSON parser (JavaScript's included) reads
    /// exactly. Milliseconds reach it in the year 287396.
    static let maximumVersion: Int64 = 9_007_199_254_740_991

    let db: any StoreConnection
    let actor: String
    /// One timestamp for the whole transaction, so the audit entry, `updated_at` and the version agree.
    let now: Date

    init(_ db: any StoreConnection, actor: String, now: Date) throws {
        guard !actor.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw StoreError(.invalidInput, "The actor is empty. Pass --actor with the name of the person making the change, or run as a named OS user.")
        }
        self.db = db
        self.actor = actor
        self.now = now
    }

    /// The customer, matched ignoring case, or `StoreError.customerNotFound`.
    func customer(_ name: CustomerName) throws -> CustomerRow {
        let customer = try db.fetchOne("SELECT \(StoredRows.customerColumns) FROM customer WHERE name = ?", [name.rawValue]) {
            try StoredRows.customerRow($0)
        }
        guard let customer else { throw StoreError.customerNotFound(name.rawValue) }
        return customer
    }

    /// The customer with this id, or nil.
    func customer(id: Int64) throws -> CustomerRow? {
        try db.fetchOne("SELECT \(StoredRows.customerColumns) FROM customer WHERE id = ?", [id]) { try StoredRows.customerRow($0) }
    }

    /// The host's id and current settings, or `StoreError.hostNotFound`.
    func host(_ hostname: Hostname, of customer: CustomerRow) throws -> (id: Int64, host: HostPins) {
        guard let found = try existingHost(hostname, of: customer) else {
            throw StoreError.hostNotFound(hostname.rawValue, customer: customer.name.rawValue)
        }
        return found
    }

    /// The host's id and current settings, or `nil` if the customer has no such host.
    func existingHost(_ hostname: Hostname, of customer: CustomerRow) throws -> (id: Int64, host: HostPins)? {
        try db.fetchOne("SELECT \(StoredRows.hostColumns) FROM host WHERE customer_id = ? AND hostname = ?", [customer.id, hostname.rawValue]) { row in
            let (id, _, host) = try StoredRows.host(row)
            return (id, host)
        }
    }

    func pinCount(ofHost hostID: Int64) throws -> Int {
        try db.fetchValue(Int.self, "SELECT count(*) FROM pin WHERE host_id = ?", [hostID]) ?? 0
    }

    /// The version a new customer of this name starts at: above any version the name ever had, and at least
    /// the current time in milliseconds.
    func firstVersion(for name: CustomerName) throws -> Int64 {
        try nextVersion(after: 0, for: name)
    }

    /// max(`current` + 1, the name's high-water mark + 1, now in milliseconds).
    func nextVersion(after current: Int64, for name: CustomerName) throws -> Int64 {
        let highWater = try db.fetchValue(Int64.self, "SELECT version FROM customer_version_high_water WHERE name = ?", [name.rawValue]) ?? 0
        let milliseconds = (now.timeIntervalSince1970 * 1000).rounded(.down)
        let clock = Int64(exactly: milliseconds) ?? (milliseconds > 0 ? Self.maximumVersion : 0)
        let floor = max(current, highWater)
        guard floor < Self.maximumVersion else {
            throw StoreError(.corruptData, "Customer '\(name)' has content version \(floor), the largest a bundle can carry. The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
        }
        return min(max(floor + 1, clock), Self.maximumVersion)
    }

    /// Records a change to an existing customer: the next version (see `nextVersion`), `updated_at`,
    /// high-water mark, audit entry, change counter. Returns the new version.
    @discardableResult
    func recordChange(of customer: CustomerRow, _ action: AuditAction, _ details: String) throws -> Int64 {
        let version = try nextVersion(after: customer.version, for: customer.name)
        try db.execute("UPDATE customer SET version = ?, updated_at = ? WHERE id = ?", [version, now, customer.id])
        try recordPublishedVersion(version, ofCustomerID: customer.id)
        try TransparencyLogAppender.appendVersion(version, ofCustomerID: customer.id, named: customer.name, at: now, db)
        try raiseHighWater(customer.name.rawValue, to: version)
        try audit(customer.name, action, details, version: version)
        return version
    }

    /// Records a change to a customer's settings that leaves its published content as it is: `updated_at` and
    /// an audit entry at the current version. The version stays, since apps would otherwise fetch a bundle
    /// whose pins are the same under a new number.
    func recordSettingChange(of customer: CustomerRow, _ action: AuditAction, _ details: String) throws {
        try db.execute("UPDATE customer SET updated_at = ? WHERE id = ?", [now, customer.id])
        try audit(customer.name, action, details, version: customer.version)
    }

    /// Records the version of a customer just inserted or removed, with its audit entry and the change counter.
    /// A customer's first version is logged here; a removal (version 0) appends nothing, and the entries of the
    /// removed customer's versions stay in the log.
    func recordMembership(of name: CustomerName, _ action: AuditAction, _ details: String, version: Int64) throws {
        if version > 0 {
            if let customer = try db.fetchOne("SELECT \(StoredRows.customerColumns) FROM customer WHERE name = ?", [name.rawValue], { try StoredRows.customerRow($0) }) {
                try recordPublishedVersion(version, ofCustomerID: customer.id)
                // A setting change records the current version again: that version is logged already.
                if customer.version == version, try !TransparencyLogAppender.hasEntry(of: customer.name, version: version, db) {
                    try TransparencyLogAppender.appendVersion(version, ofCustomerID: customer.id, named: customer.name, at: now, db)
                }
            }
            try raiseHighWater(name.rawValue, to: version)
        }
        try audit(name, action, details, version: version)
    }

    /// Stamps the pins this transaction inserted for the customer with the version that first carries them
    /// (`pin.published_version`): every path that adds pins ends in `recordChange` or `recordMembership`, so no
    /// pin stays unstamped past its transaction.
    func recordPublishedVersion(_ version: Int64, ofCustomerID customerID: Int64) throws {
        try db.execute("""
            UPDATE pin SET published_version = ?
            WHERE published_version IS NULL AND withheld = 0 AND host_id IN (SELECT id FROM host WHERE customer_id = ?)
            """, [version, customerID])
    }

    /// Raises the highest version recorded for a name (matched ignoring case); never lowers it.
    func raiseHighWater(_ name: String, to version: Int64) throws {
        try db.execute("""
            INSERT INTO customer_version_high_water (name, version) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET version = \(db.dialect.greatest("customer_version_high_water.version", "excluded.version"))
            """, [name, version])
    }

    /// Records a change that belongs to no customer (an admin account, say): an audit entry under `*` at
    /// version 0, and the change counter.
    func recordDeploymentChange(_ action: AuditAction, _ details: String) throws {
        try db.execute("""
            INSERT INTO audit_log (at, actor, customer, action, details, version) VALUES (?, ?, ?, ?, ?, ?)
            """, [now, actor, Self.deploymentAuditName, action.rawValue, details, Int64(0)])
        try db.execute("UPDATE change_counter SET value = value + 1 WHERE id = 1")
    }

    /// The `customer` of audit entries about the deployment rather than one customer.
    static let deploymentAuditName = "*"

    private func audit(_ name: CustomerName, _ action: AuditAction, _ details: String, version: Int64) throws {
        try db.execute("""
            INSERT INTO audit_log (at, actor, customer, action, details, version) VALUES (?, ?, ?, ?, ?, ?)
            """, [now, actor, name.rawValue, action.rawValue, details, version])
        try db.execute("UPDATE change_counter SET value = value + 1 WHERE id = 1")
    }
}
