import Foundation
import PinsetAdminContract
import PinsetCore

/// One role of an admin: for one customer, or for every customer (`customer == nil`).
public struct AdminGrant: Sendable, Hashable, CustomStringConvertible {
    public var role: AdminRole
    public var customer: CustomerName?

    public init(role: AdminRole, customer: CustomerName?) {
        self.role = role
        self.customer = customer
    }

    /// `role` (every customer) or `role:customer`, as `pinset admin add --role` takes it.
    public init(parsing text: String) throws(InputError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let role = AdminRole(rawValue: String(parts[0]).lowercased()) else {
            throw InputError("'\(parts[0])' is not a role. Give viewer, editor, reviewer or operator, optionally followed by ':CUSTOMER'.")
        }
        let customer = parts.count > 1 ? try CustomerName(String(parts[1])) : nil
        if role == .operator && customer != nil {
            throw InputError("The operator role covers the whole deployment; give it without a customer ('operator').")
        }
        self.init(role: role, customer: customer)
    }

    public var description: String { customer.map { "\(role.rawValue):\($0)" } ?? role.rawValue }

    /// Whether the grant covers `customer` (any customer for a deployment-wide grant).
    public func covers(_ name: CustomerName) -> Bool {
        guard let customer else { return true }
        return customer.rawValue.lowercased() == name.rawValue.lowercased()
    }

    fileprivate var storedCustomer: String { customer?.rawValue ?? "*" }
}

/// A named admin and its roles.
public struct AdminAccount: Sendable, Hashable {
    public var name: String
    public var grants: [AdminGrant]
    public var createdAt: Date
    public var createdBy: String
    public var disabledAt: Date?
    /// Tokens that still authenticate (not revoked, not expired when read).
    public var activeTokens: Int
    /// The token this account was authenticated with, when it was (``PinStore/admin(authenticatedBy:at:)``): what
    /// change requests record, so that revoking the token voids them.
    public var token: AdminTokenReference? = nil

    public var isDisabled: Bool { disabledAt != nil }
}

/// One admin token as requests record it: the SHA-256 it is stored under, and the label it was given.
public struct AdminTokenReference: Sendable, Hashable {
    public var sha256: SHA256Fingerprint
    public var label: String

    public init(sha256: SHA256Fingerprint, label: String) {
        self.sha256 = sha256
        self.label = label
    }
}

/// What revoking tokens did: how many were revoked, and the open change requests they had made, now voided.
public struct AdminTokenRevocation: Sendable, Hashable {
    public var revokedTokens: Int
    public var voidedRequests: [Int64]
}

extension PinStore {
    /// The rule for admin names: what audit entries and `--as` show, so short and printable.
    public static func validateAdminName(_ name: String) throws {
        let allowed = name.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) || "._@-".unicodeScalars.contains($0) }
        guard (1...64).contains(name.count), allowed, name.first?.isLetter == true else {
            throw StoreError(.invalidInput, "The admin name '\(TerminalText.escape(String(name.prefix(70))))' is not valid: use 1 to 64 ASCII letters, digits, '.', '_', '@' or '-', starting with a letter (for example 'alice' or 'alice@example.com').")
        }
    }

    /// Creates an admin with its roles.
    public func addAdmin(_ name: String, grants: [AdminGrant], actor: String) throws {
        try Self.validateAdminName(name)
        guard !grants.isEmpty else {
            throw StoreError(.invalidInput, "Give the admin at least one role, for example --role editor:acme or --role viewer.")
        }
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            if try db.fetchValue(String.self, "SELECT name FROM admin_account WHERE lower(name) = lower(?)", [name]) != nil {
                throw StoreError(.adminExists, "An admin named '\(name)' exists already. Change its roles with 'pinset admin update \(name) --role …'.")
            }
            try db.execute("INSERT INTO admin_account (name, created_at, created_by) VALUES (?, ?, ?)", [name, change.now, actor])
            try Self.insertGrants(grants, of: name, db)
            try change.recordDeploymentChange(.adminAdded, "admin \(name) with roles " + grants.map(\.description).joined(separator: ", "))
        }
    }

    /// Replaces an admin's roles, or disables (or enables) it. Disabling is what one does to an admin whose token
    /// may be in the wrong hands, so it revokes every token of the admin and voids its open change requests in the
    /// same transaction: enabling the admin again brings back neither, and it needs a new token.
    public func updateAdmin(_ name: String, grants: [AdminGrant]?, disabled: Bool?, actor: String) throws {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            guard try db.fetchValue(String.self, "SELECT name FROM admin_account WHERE name = ?", [name]) != nil else {
                throw StoreError(.adminNotFound, "There is no admin named '\(TerminalText.escape(name))'. List admins with 'pinset admin list'.")
            }
            var parts: [String] = []
            if let grants {
                guard !grants.isEmpty else { throw StoreError(.invalidInput, "Give at least one role; to take every right away, pass --disable.") }
                try db.execute("DELETE FROM admin_grant WHERE admin_name = ?", [name])
                try Self.insertGrants(grants, of: name, db)
                parts.append("roles now " + grants.map(\.description).joined(separator: ", "))
            }
            if let disabled {
                try db.execute("UPDATE admin_account SET disabled_at = ? WHERE name = ?", [disabled ? change.now : nil, name])
                parts.append(disabled ? "disabled" : "enabled")
                if disabled {
                    let revoked = try db.execute("UPDATE admin_token SET revoked_at = ? WHERE admin_name = ? AND revoked_at IS NULL", [change.now, name])
                    let voided = try Self.voidOpenRequests(
                        sql: "SELECT id, customer_id, author FROM change_request WHERE lower(author) = lower(?) AND state = 'open' ORDER BY id",
                        arguments: [name], reason: "voided: its author \(name) was disabled by \(actor)", change: change, db)
                    parts.append("\(revoked) token(s) revoked, \(voided.count) open change request(s) voided")
                }
            }
            try change.recordDeploymentChange(.adminUpdated, "admin \(name): " + parts.joined(separator: "; "))
        }
    }

    private static func insertGrants(_ grants: [AdminGrant], of name: String, _ db: any StoreConnection) throws {
        for grant in Set(grants) {
            try db.execute("INSERT INTO admin_grant (admin_name, customer, role) VALUES (?, ?, ?)", [name, grant.storedCustomer, grant.role.rawValue])
        }
    }

    /// Every admin, by name.
    public func admins(at now: Date = Date()) throws -> [AdminAccount] {
        try database.read { db in try Self.admins(db, named: nil, at: now) }
    }

    static func admins(_ db: any StoreConnection, named name: String?, at now: Date) throws -> [AdminAccount] {
        var grants: [String: [AdminGrant]] = [:]
        try db.forEachRow("SELECT admin_name, customer, role FROM admin_grant ORDER BY admin_name, role, customer", []) { row in
            let stored: String = try row.decode(atIndex: 1)
            guard let role = AdminRole(rawValue: try row.decode(atIndex: 2)) else { return }
            let customer = stored == "*" ? nil : try StoredRows.customerName(stored)
            grants[try row.decode(atIndex: 0), default: []].append(AdminGrant(role: role, customer: customer))
        }
        let filter = name == nil ? "" : "WHERE admin_account.name = ?"
        return try db.fetchAll("""
            SELECT admin_account.name, created_at, created_by, disabled_at,
                   (SELECT count(*) FROM admin_token WHERE admin_token.admin_name = admin_account.name AND revoked_at IS NULL
                    AND (expires_at IS NULL OR expires_at > ?))
            FROM admin_account \(filter) ORDER BY admin_account.name
            """, [now] + (name.map { [$0] } ?? [])) { row in
            let name: String = try row.decode(atIndex: 0)
            return AdminAccount(name: name, grants: grants[name] ?? [], createdAt: try row.decode(atIndex: 1), createdBy: try row.decode(atIndex: 2),
                                disabledAt: try row.decode(atIndex: 3), activeTokens: Int(try row.decode(Int64.self, atIndex: 4)))
        }
    }

    /// Stores the SHA-256 of a new bearer token of `admin`. The token itself is never stored.
    public func addAdminToken(sha256: SHA256Fingerprint, of admin: String, label: String, expiresAt: Date?, actor: String) throws {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            guard try db.fetchValue(String.self, "SELECT name FROM admin_account WHERE name = ? AND disabled_at IS NULL", [admin]) != nil else {
                throw StoreError(.adminNotFound, "There is no enabled admin named '\(TerminalText.escape(admin))'. Add it with 'pinset admin add', or enable it.")
            }
            try db.execute("INSERT INTO admin_token (token_sha256, admin_name, label, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                           [sha256.bytes, admin, label, change.now, expiresAt])
            try change.recordDeploymentChange(.adminTokenAdded, "token '\(label)' for admin \(admin)" + (expiresAt.map { ", expires \(StoredDate.format($0))" } ?? ", no expiry"))
        }
    }

    /// Revokes the admin's tokens (those labelled `label`, or all), and voids the open change requests they made in
    /// the same transaction: a token is revoked because it may be in the wrong hands, and what it asked for must not
    /// be approved afterwards by a reviewer who trusts the author's name.
    @discardableResult
    public func revokeAdminTokens(of admin: String, label: String?, actor: String) throws -> AdminTokenRevocation {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            var filter = "admin_name = ? AND revoked_at IS NULL"
            var arguments: [any SQLArgument] = [admin]
            if let label {
                filter += " AND label = ?"
                arguments.append(label)
            }
            var revoked: [(sha256: [UInt8], label: String)] = []
            try db.forEachRow("SELECT token_sha256, label FROM admin_token WHERE \(filter)", arguments) { row in
                revoked.append((try row.decode(atIndex: 0), try row.decode(atIndex: 1)))
            }
            guard !revoked.isEmpty else {
                throw StoreError(.adminNotFound, "Admin '\(TerminalText.escape(admin))' has no unrevoked token\(label.map { " labelled '\(TerminalText.escape($0))'" } ?? ""). List admins with 'pinset admin list'.")
            }
            try db.execute("UPDATE admin_token SET revoked_at = ? WHERE \(filter)", [change.now] + arguments)
            try change.recordDeploymentChange(.adminTokensRevoked, "revoked \(revoked.count) token(s) of admin \(admin)" + (label.map { " labelled '\($0)'" } ?? ""))
            var voided: [Int64] = []
            // The admin's open requests that record no token (made before tokens were recorded) may have been made with
            // any of its tokens, this one too: they are voided with it rather than left approvable.
            let unrecorded = (
                sql: "SELECT id, customer_id, author FROM change_request WHERE lower(author) = lower(?) AND author_token_sha256 IS NULL AND state = 'open' ORDER BY id",
                arguments: [admin] as [any SQLArgument],
                reason: "voided: it records no token, and a token of \(admin) ('\(revoked.map(\.label).joined(separator: "', '"))') was revoked by \(actor)"
            )
            let recorded = revoked.map { token in (
                sql: "SELECT id, customer_id, author FROM change_request WHERE author_token_sha256 = ? AND state = 'open' ORDER BY id",
                arguments: [token.sha256] as [any SQLArgument],
                reason: "voided: the token '\(token.label)' of \(admin) that made it was revoked by \(actor)"
            ) }
            for (sql, arguments, reason) in recorded + [unrecorded] {
                voided += try Self.voidOpenRequests(sql: sql, arguments: arguments, reason: reason, change: change, db)
            }
            return AdminTokenRevocation(revokedTokens: revoked.count, voidedRequests: voided.sorted())
        }
    }

    /// Voids the open change requests `sql` selects (id, customer id, author), each audited on its customer.
    private static func voidOpenRequests(
        sql: String, arguments: [any SQLArgument], reason: String, change: ChangeRecorder, _ db: any StoreConnection
    ) throws -> [Int64] {
        var requests: [(id: Int64, customerID: Int64, author: String)] = []
        try db.forEachRow(sql, arguments) { row in
            requests.append((try row.decode(atIndex: 0), try row.decode(atIndex: 1), try row.decode(atIndex: 2)))
        }
        for request in requests {
            try db.execute("""
                UPDATE change_request SET state = 'rejected', decided_by = ?, decided_at = ?, decision_note = ?, void_reason = ?
                WHERE id = ? AND state = 'open'
                """, [change.actor, change.now, reason, reason, request.id])
            if let owner = try change.customer(id: request.customerID) {
                try change.recordSettingChange(of: owner, .changeRejected, "change request \(request.id) by \(request.author) \(reason)")
            }
        }
        return requests.map(\.id)
    }

    /// The enabled admin whose unrevoked, unexpired token hashes to `sha256`, or nil. The hash is the lookup key,
    /// so no stored secret is compared byte by byte in the program.
    public func admin(authenticatedBy sha256: SHA256Fingerprint, at now: Date = Date()) throws -> AdminAccount? {
        try database.read { db in
            guard let (name, label) = try db.fetchOne("""
                SELECT admin_account.name, admin_token.label FROM admin_token JOIN admin_account ON admin_token.admin_name = admin_account.name
                WHERE admin_token.token_sha256 = ? AND admin_token.revoked_at IS NULL
                  AND (admin_token.expires_at IS NULL OR admin_token.expires_at > ?) AND admin_account.disabled_at IS NULL
                """, [sha256.bytes, now], { row -> (String, String) in (try row.decode(atIndex: 0), try row.decode(atIndex: 1)) }),
                var account = try Self.admins(db, named: name, at: now).first
            else { return nil }
            account.token = AdminTokenReference(sha256: sha256, label: label)
            return account
        }
    }

    /// Whether pin edits of `customer` by named admins need a second admin's approval.
    public func requiresReview(_ customer: CustomerName) throws -> Bool {
        try database.read { db in
            try db.fetchValue(Int64.self, """
                SELECT count(*) FROM review_required JOIN customer ON review_required.customer_id = customer.id WHERE customer.name = ?
                """, [customer.rawValue]) ?? 0 > 0
        }
    }

    /// Turns review on or off for a customer's edits by named admins.
    public func setRequiresReview(_ required: Bool, for customer: CustomerName, actor: String) throws {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            try change.setRequiresReview(required, of: try change.customer(customer))
        }
    }

    /// Changes whether a customer serves legacy clients and whether its edits need review, in one transaction;
    /// nil keeps a setting. Returns whether anything changed; a setting it already has is not written.
    ///
    /// - Throws: `StoreError.customerNotFound`.
    public func updateCustomerSettings(_ name: CustomerName, servesLegacyClients: Bool?, requiresReview: Bool?, actor: String) throws -> Bool {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let customer = try change.customer(name)
            var changed = false
            if let serves = servesLegacyClients {
                changed = try change.setServesLegacyClients(serves, of: customer)
            }
            if let required = requiresReview,
               (try db.fetchValue(Int64.self, "SELECT customer_id FROM review_required WHERE customer_id = ?", [customer.id]) != nil) != required {
                try change.setRequiresReview(required, of: customer)
                changed = true
            }
            return changed
        }
    }

}

extension ChangeRecorder {
    func setRequiresReview(_ required: Bool, of owner: CustomerRow) throws {
        if required {
            try db.execute("INSERT INTO review_required (customer_id, since, set_by) VALUES (?, ?, ?) ON CONFLICT (customer_id) DO NOTHING",
                           [owner.id, now, actor])
        } else {
            try db.execute("DELETE FROM review_required WHERE customer_id = ?", [owner.id])
        }
        try recordSettingChange(of: owner, .reviewRequirementChanged, required ? "pin edits now need a second admin's approval" : "pin edits no longer need review")
    }
}

extension ChangeRecorder {
    /// Refuses a direct edit of a customer that requires review, inside the edit's transaction: review turned on
    /// while a named admin's edit waited on its live-chain check still stops that edit.
    func requireNoReview(of customer: CustomerName) throws {
        let owner = try self.customer(customer)
        if try db.fetchValue(Int64.self, "SELECT customer_id FROM review_required WHERE customer_id = ?", [owner.id]) != nil {
            throw StoreError(.reviewRequired, "Pin edits of '\(owner.name)' by named admins need a second admin's approval now. Nothing was changed; make the edit again to open a change request.")
        }
    }
}
