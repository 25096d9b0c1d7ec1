import Foundation
import Logging
import PinsetMigrations
import PostgresNIO

/// Applies the PostgreSQL schema migrations, recording each in `pinset_migrations`.
///
/// Several instances starting at once against a new database all try to migrate it: a session-level advisory
/// lock makes them take turns, so the first applies the missing migrations (each in its own transaction) and
/// the others find nothing left to do.
enum PostgresMigrator {
    static func migrate(_ connection: PostgresConnection, logger: Logger, database: String) throws {
        let session = PostgresSession(connection: connection, logger: logger, database: database)
        try session.execute("SELECT pg_advisory_lock(?)", [PostgresDatabase.migrationLockKey])
        defer { _ = try? session.execute("SELECT pg_advisory_unlock(?)", [PostgresDatabase.migrationLockKey]) }
        try session.execute("""
            CREATE TABLE IF NOT EXISTS pinset_migrations (
                position    BIGINT  PRIMARY KEY,
                identifier  TEXT    NOT NULL UNIQUE,
                applied_at  TEXT    NOT NULL
            )
            """)
        let applied = try appliedIdentifiers(connection, logger: logger, database: database)
        try refuseUnknown(applied, database: database)
        for (position, migration) in SchemaMigrations.postgreSQL.enumerated() where !applied.contains(migration.identifier) {
            try session.execute("BEGIN")
            do {
                try session.executeScript(migration.sql)
                try session.execute("INSERT INTO pinset_migrations (position, identifier, applied_at) VALUES (?, ?, ?)",
                                    [Int64(position + 1), migration.identifier, Date()])
                try session.execute("COMMIT")
            } catch {
                _ = try? session.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The recorded migrations in the order applied; empty for a database Pinset never used.
    static func appliedIdentifiers(_ connection: PostgresConnection, logger: Logger, database: String) throws -> [String] {
        let session = PostgresSession(connection: connection, logger: logger, database: database)
        guard try session.fetchValue(Bool.self, "SELECT to_regclass('pinset_migrations') IS NOT NULL") == true else { return [] }
        return try session.fetchAll("SELECT identifier FROM pinset_migrations ORDER BY position") { try $0.decode(String.self, atIndex: 0) }
    }

    static func refuseUnknown(_ applied: [String], database: String) throws {
        let known = Set(SchemaMigrations.postgreSQL.map(\.identifier))
        let unknown = applied.filter { !known.contains($0) }
        if !unknown.isEmpty {
            throw StoreError.databaseTooNew(database, unknown: unknown)
        }
    }
}
