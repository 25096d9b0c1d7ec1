import Foundation
import GRDB
import PinsetCore
import PinsetMigrations

/// The customers, hosts, pins and audit log of a Pinset deployment, in one SQLite file.
///
/// The file is shared: `pinset serve` reads it while `pinset` admin commands write it, each process with its
/// own `PinStore`. WAL mode lets readers proceed during a write, and a busy timeout makes a writer wait for
/// another process's write instead of failing with `SQLITE_BUSY`. Writes run in `IMMEDIATE` transactions
/// (GRDB's default for writes), so they never fail on upgrading a read lock.
///
/// Every write is one transaction that checks its preconditions, changes the data, increases the affected
/// customer's content version, appends an audit entry and bumps the global change counter; if any step
/// throws, nothing is changed.
///
/// Thread-safe: a `PinStore` may be used from any thread. Reads run concurrently; writes are serialised.
public final class PinStore: Sendable {
    /// How long a write waits for another connection's write to finish before failing with `SQLITE_BUSY`.
    public static let defaultBusyTimeout: TimeInterval = 5

    /// The permissions of a database file this store creates: owner read/write, group read (for a server
    /// running under a different user in the owner's group), nothing for others. The process umask can only
    /// tighten this. SQLite gives the `-wal` and `-shm` files the same permissions as the database.
    public static let newFileMode: mode_t = 0o640

    /// The path of the database file.
    public let path: String

    let pool: DatabasePool

    /// The time of each change: its audit entry, `updated_at`, and the floor of its content version. Tests
    /// inject a clock; the program uses the system clock.
    let clock: @Sendable () -> Date

    /// Opens the database at `path` for reading and writing, creating it (mode 0640 or tighter) if missing and
    /// applying any migrations this program has that the file lacks.
    ///
    /// - Throws: `StoreError` with code `.databaseTooNew` if the file records migrations this program does not
    ///   know, `.unrestoredBackup` if the file is a backup that was put in place without `restore`; a GRDB
    ///   `DatabaseError` if the file cannot be opened or is not a database.
    public convenience init(path: String) throws {
        try self.init(path: path, readOnly: false, busyTimeout: Self.defaultBusyTimeout)
    }

    /// Opens the database at `path`.
    ///
    /// A read-only store neither creates the file nor migrates it; it requires a file whose migrations are
    /// all applied, and every write method fails with a `DatabaseError` (`SQLITE_READONLY`). Only a read-only
    /// store opens a backup that was not restored (see `BackupMarker`).
    public static func open(path: String, readOnly: Bool = false, busyTimeout: TimeInterval = defaultBusyTimeout) throws -> PinStore {
        try PinStore(path: path, readOnly: readOnly, busyTimeout: busyTimeout)
    }

    init(path: String, readOnly: Bool = false, busyTimeout: TimeInterval = defaultBusyTimeout,
         allowingUnrestoredBackup: Bool = false, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.path = path
        self.clock = clock
        if !readOnly {
            try Self.createFileIfMissing(path)
        }
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "pinset"
        configuration.prepareDatabase { db in
            // A committed change must survive a power loss: the CLI reports success to the admin.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)

        let migrator = SchemaMigrator.make()
        if try pool.read(migrator.hasBeenSuperseded) {
            let known = Set(SchemaMigrations.all.map(\.identifier))
            let unknown = try pool.read(migrator.appliedIdentifiers).subtracting(known).sorted()
            throw StoreError(.databaseTooNew, "The database \(path) was written by a newer pinset (it has schema migrations \(unknown.joined(separator: ", ")) that this program does not know). Upgrade pinset on this machine before using this database.")
        }
        if readOnly {
            guard try pool.read(migrator.hasCompletedMigrations) else {
                throw StoreError(.databaseNotMigrated, "The database \(path) has no complete Pinset schema. Open it once read-write (any 'pinset' admin command) to create or upgrade the schema.")
            }
        } else {
            try SchemaMigrator.migrate(pool, with: migrator)
            if !allowingUnrestoredBackup, let marker = try pool.read(BackupMarker.read) {
                throw StoreError.unrestoredBackup(path, marker)
            }
        }
    }

    /// The identifiers of the migrations recorded in the database, in the order they were applied.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
    }

    /// Creates an empty file with `newFileMode` so that SQLite, which would create it with 0644 minus umask,
    /// opens a file that was never world-readable. An existing file is left as it is.
    private static func createFileIfMissing(_ path: String) throws {
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, newFileMode)
        if descriptor >= 0 {
            close(descriptor)
            return
        }
        let error = errno
        guard error == EEXIST else {
            throw StoreError(.invalidInput, "Cannot create the database file \(path): \(String(cString: strerror(error))). Check that the directory exists and is writable.")
        }
    }
}
