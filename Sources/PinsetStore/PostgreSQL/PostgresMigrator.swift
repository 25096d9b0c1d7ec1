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
    static func migrate(_ session: PostgresSession, lockWait: Int) throws {
        let database = session.database
        // Bounded below the answer timeout, so that an instance waiting for another's long migration says so
        // rather than looking like an unreachable server.
        try session.execute("SET lock_timeout = '\(lockWait)s'")
        do {
            try session.execute("SELECT pg_advisory_lock(?)", [PostgresDatabase.migrationLockKey])
        } catch let error as PostgresStatementError where error.state == "55P03" {
            throw StoreError(.unavailable, "Another pinset instance or command has been creating or upgrading the schema of \(database) for \(lockWait) s. Nothing was changed. Try again when it has finished.")
        }
        try session.execute("RESET lock_timeout")
        defer { _ = try? session.execute("SELECT pg_advisory_unlock(?)", [PostgresDatabase.migrationLockKey]) }
        try session.execute("""
            CREATE TABLE IF NOT EXISTS pinset_migrations (
                position    BIGINT  PRIMARY KEY,
                identifier  TEXT    NOT NULL UNIQUE,
                applied_at  TEXT    NOT NULL
            )
            """)
        let applied = try appliedIdentifiers(session)
        try refuseUnknown(applied, database: database)
        for (position, migration) in SchemaMigrations.postgreSQL.enumerated() where !applied.contains(migration.identifier) {
            // Read committed, as writes are: the lock below waits for other writers, whose commits the migration must see.
            try session.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            do {
                // Writers from instances already running keep writing while a new one migrates: taking the write
                // lock makes a migration that reads or fills in data see them all or none.
                try session.execute("SELECT pg_advisory_xact_lock(?)", [PostgresDatabase.writeLockKey])
                try session.executeScript(migration.sql)
                try MigrationFollowUps.run(after: migration.identifier, session, now: Date())
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
    static func appliedIdentifiers(_ session: PostgresSession) throws -> [String] {
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
