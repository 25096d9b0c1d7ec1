import Foundation

/// Who could act in the database a restore replaces, and what its audit log recorded after the backup was taken.
///
/// A restore brings back pin sets, not credentials: an admin disabled, a grant taken away or a token revoked after
/// the backup (the stolen token the restore is meant to clean up after) must stay so, and the audit entries that
/// say what happened meanwhile must survive it. So the restored database's credentials are never more than either
/// database's: an account of the backup is disabled unless the replaced database has it enabled, a grant is kept
/// only where both have it, and a token is revoked unless the replaced database has it unrevoked. Tokens issued
/// after the backup are not carried in (they would be credentials the backup never had); they are counted so
/// that the operator can issue them again.
struct ReplacedAdministration: Hashable {
    struct Grant: Hashable {
        var admin: String
        /// Lower-cased: grants name customers as stored and match them ignoring case.
        var customer: String
        var role: String
    }

    struct AuditRow: Hashable {
        var at: String
        var actor: String
        var customer: String
        var action: String
        var details: String
        var version: Int64
    }

    /// When an account or token was disabled or revoked; `nil` while it is in force.
    struct Ended: Hashable {
        var at: String?
    }

    /// Accounts by name.
    var accounts: [String: Ended] = [:]
    var grants: Set<Grant> = []
    /// Tokens by SHA-256.
    var tokens: [[UInt8]: Ended] = [:]
    /// The replaced database's audit entries at or after the backup's newest one, oldest first.
    var auditTail: [AuditRow] = []

    /// Reads `db`; `withAdmins` is false for a database from before named admins (it has none).
    /// Where the backup's audit log ends: its newest entry's time and its highest entry number.
    struct AuditEnd: Equatable, Sendable {
        var newestAt: String
        var highestID: Int64
    }

    static func read(_ db: any StoreConnection, withAdmins: Bool, auditSince: AuditEnd?) throws -> ReplacedAdministration {
        var result = ReplacedAdministration()
        if withAdmins {
            try db.forEachRow("SELECT name, disabled_at FROM admin_account", []) { row in
                result.accounts[try row.decode(String.self, atIndex: 0)] = Ended(at: try row.decode(String?.self, atIndex: 1))
            }
            try db.forEachRow("SELECT admin_name, customer, role FROM admin_grant", []) { row in
                result.grants.insert(Grant(
                    admin: try row.decode(atIndex: 0), customer: (try row.decode(String.self, atIndex: 1)).lowercased(), role: try row.decode(atIndex: 2)))
            }
            try db.forEachRow("SELECT token_sha256, revoked_at FROM admin_token", []) { row in
                result.tokens[try row.decode([UInt8].self, atIndex: 0)] = Ended(at: try row.decode(String?.self, atIndex: 1))
            }
        }
        if let auditSince {
            // By number as well as by time: an instance whose clock was behind wrote entries with earlier times.
            try db.forEachRow("SELECT at, actor, customer, action, details, version FROM audit_log WHERE at >= ? OR id > ? ORDER BY id",
                              [auditSince.newestAt, auditSince.highestID]) { row in
                result.auditTail.append(AuditRow(
                    at: try row.decode(atIndex: 0), actor: try row.decode(atIndex: 1), customer: try row.decode(atIndex: 2),
                    action: try row.decode(atIndex: 3), details: try row.decode(atIndex: 4), version: try row.decode(atIndex: 5)))
            }
        }
        return result
    }

    /// Where the audit log of the backup at `db` ends, from which the replaced database's entries are carried.
    static func auditEnd(_ db: any StoreConnection) throws -> AuditEnd? {
        try db.fetchOne("SELECT max(at), max(id) FROM audit_log") { row in
            guard let at = try row.decode(String?.self, atIndex: 0) else { return nil }
            return AuditEnd(newestAt: at, highestID: try row.decode(Int64?.self, atIndex: 1) ?? 0)
        } ?? nil
    }

    /// Both databases' records when a restore reads two (a file and the database the servers use): the restored
    /// credentials must be within each.
    mutating func include(_ other: ReplacedAdministration) {
        accounts = Self.withinBoth(accounts, other.accounts)
        grants.formIntersection(other.grants)
        tokens = Self.withinBoth(tokens, other.tokens)
        let known = Set(auditTail)
        auditTail += other.auditTail.filter { !known.contains($0) }
    }

    /// What both have, ended where either ended it.
    static func withinBoth<Key: Hashable>(_ one: [Key: Ended], _ other: [Key: Ended]) -> [Key: Ended] {
        var both: [Key: Ended] = [:]
        for (key, ended) in one {
            if let otherEnded = other[key] { both[key] = Ended(at: ended.at ?? otherEnded.at) }
        }
        return both
    }

    /// Applies the rules above to the restored database `db`, and appends the audit tail (before anything the
    /// restore itself records, so the log stays in order). Returns what changed.
    func apply(to db: any StoreConnection, now: Date) throws -> RestoreReport.Credentials {
        var changes = RestoreReport.Credentials()
        for entry in auditTail {
            let present = try db.fetchValue(Bool.self, """
                SELECT EXISTS (SELECT 1 FROM audit_log WHERE at = ? AND actor = ? AND customer = ? AND action = ? AND details = ? AND version = ?)
                """, [entry.at, entry.actor, entry.customer, entry.action, entry.details, entry.version]) ?? false
            guard !present else { continue }
            try db.execute("INSERT INTO audit_log (at, actor, customer, action, details, version) VALUES (?, ?, ?, ?, ?, ?)",
                           [entry.at, entry.actor, entry.customer, entry.action, entry.details, entry.version])
            changes.auditEntriesCarried += 1
        }
        let restoredAccounts = try db.fetchAll("SELECT name, disabled_at FROM admin_account ORDER BY name") {
            (try $0.decode(String.self, atIndex: 0), try $0.decode(String?.self, atIndex: 1))
        }
        for (name, disabledAt) in restoredAccounts where disabledAt == nil {
            guard let disabled = Self.end(accounts[name], now: now) else { continue }
            try db.execute("UPDATE admin_account SET disabled_at = ? WHERE name = ?", [disabled, name])
            changes.accountsDisabled.append(name)
        }
        let restoredGrants = try db.fetchAll("SELECT admin_name, customer, role FROM admin_grant") {
            (admin: try $0.decode(String.self, atIndex: 0), customer: try $0.decode(String.self, atIndex: 1), role: try $0.decode(String.self, atIndex: 2))
        }
        for grant in restoredGrants where !grants.contains(Grant(admin: grant.admin, customer: grant.customer.lowercased(), role: grant.role)) {
            try db.execute("DELETE FROM admin_grant WHERE admin_name = ? AND customer = ? AND role = ?", [grant.admin, grant.customer, grant.role])
            changes.grantsRemoved += 1
        }
        let restoredTokens = try db.fetchAll("SELECT token_sha256, revoked_at FROM admin_token") {
            (digest: try $0.decode([UInt8].self, atIndex: 0), revokedAt: try $0.decode(String?.self, atIndex: 1))
        }
        for token in restoredTokens where token.revokedAt == nil {
            guard let revoked = Self.end(tokens[token.digest], now: now) else { continue }
            try db.execute("UPDATE admin_token SET revoked_at = ? WHERE token_sha256 = ?", [revoked, token.digest])
            changes.tokensRevoked += 1
        }
        let restoredDigests = Set(restoredTokens.map(\.digest))
        changes.tokensNotCarried = tokens.filter { $0.value.at == nil && !restoredDigests.contains($0.key) }.count
        return changes
    }

    /// When a credential in force in the backup ends in the restored database: when the replaced database ended it,
    /// or now when that database does not have it; `nil` when it is in force there too.
    static func end(_ replaced: Ended?, now: Date) -> (any SQLArgument)? {
        guard let replaced else { return now }
        return replaced.at
    }
}
