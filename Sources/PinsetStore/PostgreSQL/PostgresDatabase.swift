import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PinsetMigrations
import PostgresNIO

/// The shared backend: a PostgreSQL database that `pinset serve` instances on several hosts, and the admin
/// commands, all use at once.
///
/// The store's callers are synchronous, so it waits on PostgresNIO's event loop futures from their threads.
/// Each transaction runs on a connection of its own, taken from a small pool: a server's re-signing, host
/// monitor and report writer then never wait for each other's statements — during an outage, each waits only
/// for its own. A connection that fails is dropped and the next transaction connects again, so a store
/// outlives a database restart.
///
/// Every write transaction first takes one transaction-scoped advisory lock, so writes from every host run one
/// after another, exactly as SQLite's single writer does. A version read inside a write is then still the
/// latest when it commits: versions strictly increase, and no write ever fails with a serialization error
/// that a user would have to retry.
final class PostgresDatabase: StoreDatabase, Sendable {

    /// Advisory lock keys, in PostgreSQL's one shared 64-bit key space: "pinset" in ASCII, then a purpose byte.
    static let writeLockKey: Int64 = 0x70_69_6E_73_65_74_01
    static let migrationLockKey: Int64 = 0x70_69_6E_73_65_74_02
    /// Shown in `pg_stat_activity`, so that operators can tell Pinset's connections apart.
    static let applicationName = "pinset"

    let location: PostgresLocation
    let readOnly: Bool
    var displayName: String { location.description }
    var dialect: SQLDialect { .postgreSQL }

    private let pool: PostgresConnectionPool
    private let logger = Logger(label: "pinset.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    init(location: PostgresLocation, readOnly: Bool) throws {
        self.location = location
        self.readOnly = readOnly
        pool = try PostgresConnectionPool(location: location, logger: logger)
        try withConnection { connection in
            let session = self.session(connection)
            if readOnly {
                let applied = try PostgresMigrator.appliedIdentifiers(session)
                try PostgresMigrator.refuseUnknown(applied, database: displayName)
                guard applied == SchemaMigrations.postgreSQL.map(\.identifier) else {
                    throw StoreError(.databaseNotMigrated, "The database \(displayName) has no complete Pinset schema. Run any 'pinset' admin command against it once (e.g. 'pinset init --database …') to create or upgrade the schema.")
                }
            } else {
                try PostgresMigrator.migrate(session, lockWait: location.writeLockWait)
            }
        }
    }

    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    func write<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        guard !readOnly else {
            throw StoreError(.invalidInput, "The database \(displayName) was opened read-only; this command cannot change it.")
        }
        // Read committed, whatever the database's default_transaction_isolation says: each statement then sees what
        // was committed before it, so the reads after the write lock see every write the lock was waiting for.
        return try transaction(begin: "BEGIN ISOLATION LEVEL READ COMMITTED", lockKey: Self.writeLockKey, body)
    }

    func appliedMigrations() throws -> [String] {
        try withConnection { connection in
            try PostgresMigrator.appliedIdentifiers(session(connection))
        }
    }

    func copy(toSQLiteFile path: String) throws {
        let target = try SQLiteDatabase(path: path, readOnly: false, busyTimeout: PinStore.defaultBusyTimeout)
        defer { try? target.close() }
        try StoreCopier.copy(from: self, to: target)
    }

    func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)? {
        PostgresChangeListener.start(
            location: location, configuration: { [pool] in pool.configuration(applicationName: PostgresChangeListener.applicationName) }, onChange: onChange
        )
    }

    /// Closes the idle connections now, and those in use when their transaction ends.
    func close() throws {
        try pool.close()
    }

    private func transaction<T>(begin: String, lockKey: Int64? = nil, _ body: (any StoreConnection) throws -> T) throws -> T {
        let connection = try pool.checkOut()
        var reusable = true
        defer { pool.checkIn(connection, reusable: reusable) }
        let session = session(connection)
        var waitedForWriteLock = false
        do {
            try session.execute(begin)
            if let lockKey {
                // Shorter than the answer timeout, so that a long writer elsewhere (an import, a store copy)
                // is reported as such rather than as an unreachable server.
                try session.execute("SET LOCAL lock_timeout = '\(location.writeLockWait)s'")
                do {
                    try session.execute("SELECT pg_advisory_xact_lock(?)", [lockKey])
                } catch let error as PostgresStatementError where error.state == "55P03" {
                    waitedForWriteLock = true
                    throw StoreError(.unavailable, "Another writer (a pinset command on this or another host, an import or a store copy) held the write lock of \(displayName) for \(location.writeLockWait) s. Nothing was changed. Run the command again when it has finished.")
                }
            }
            let result = try body(session)
            try session.execute("COMMIT")
            return result
        } catch {
            // An unanswered statement or a lost server leaves the connection unusable; anything else (a
            // refused statement, a write lock held elsewhere) leaves it ready for the next transaction.
            if connection.isClosed || ((error as? StoreError)?.code == .unavailable && !waitedForWriteLock) {
                reusable = false
            } else {
                do { try session.execute("ROLLBACK") } catch { reusable = false }
            }
            throw error
        }
    }

    private func session(_ connection: PostgresConnection) -> PostgresSession {
        PostgresSession(connection: connection, logger: logger, database: displayName, answerTimeout: location.answerTimeout)
    }

    /// Runs `body` on a pooled connection, which goes back to the pool unless `body` throws.
    private func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try pool.checkOut()
        var succeeded = false
        defer { pool.checkIn(connection, reusable: succeeded) }
        let result = try body(connection)
        succeeded = true
        return result
    }

    /// Closes without waiting; the connection must stay alive until it has closed.
    static func closeInBackground(_ connection: PostgresConnection) {
        PostgresConnectionPool.closeInBackground(connection)
    }
}
