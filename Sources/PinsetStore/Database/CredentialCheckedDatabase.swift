import Foundation

/// The admin token the writes of the current task are made with: set by the admin API and the dashboard for
/// the whole of a request they authenticated with a token.
public enum AdminCredentialScope {
    @TaskLocal public static var token: AdminTokenReference?
}

/// A database whose every write transaction first requires the token of ``AdminCredentialScope`` to still
/// authenticate its admin (unrevoked, unexpired, admin enabled). A request checked long enough for its token to
/// be revoked meanwhile (a live chain that answers slowly, an approval in progress) then changes nothing, in one
/// place rather than in each write.
struct CredentialCheckedDatabase: StoreDatabase {
    let base: any StoreDatabase
    let clock: @Sendable () -> Date

    var displayName: String { base.displayName }
    var dialect: SQLDialect { base.dialect }

    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        try base.read(body)
    }

    func write<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        guard let token = AdminCredentialScope.token else { return try base.write(body) }
        return try base.write { db in
            let valid = try db.fetchValue(Int64.self, """
                SELECT count(*) FROM admin_token JOIN admin_account ON admin_token.admin_name = admin_account.name
                WHERE admin_token.token_sha256 = ? AND admin_token.revoked_at IS NULL
                  AND (admin_token.expires_at IS NULL OR admin_token.expires_at > ?) AND admin_account.disabled_at IS NULL
                """, [token.sha256.bytes, clock()]) ?? 0
            guard valid > 0 else {
                throw StoreError(.notPermittedAnyMore, "The token '\(token.label)' this change was made with was revoked or expired, or its admin disabled, while the change was being checked. Nothing was changed.")
            }
            return try body(db)
        }
    }

    func appliedMigrations() throws -> [String] { try base.appliedMigrations() }
    func copy(toSQLiteFile path: String) throws { try base.copy(toSQLiteFile: path) }
    func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)? { base.observeChanges(onChange) }
    func close() throws { try base.close() }
}
