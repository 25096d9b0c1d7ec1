import Foundation
import PinsetCore
import PinsetMigrations

/// The customers, hosts, pins and audit log of a Pinset deployment: in one SQLite file, or in a PostgreSQL
/// database shared by instances on several hosts (see `StoreLocation`). Callers do not know which; the
/// store's logic is the same SQL on both (`StoreDatabase`).
///
/// The database is shared: `pinset serve` reads it while `pinset` admin commands write it, each process with
/// its own `PinStore`. Every write is one transaction, serialised across processes, that checks its
/// preconditions, changes the data, increases the affected customer's content version, appends an audit entry
/// and bumps the global change counter; if any step throws, nothing is changed.
///
/// Thread-safe: a `PinStore` may be used from any thread.
public final class PinStore: Sendable {
    /// How long a write waits for another connection's write to finish before failing with `SQLITE_BUSY`.
    public static let defaultBusyTimeout: TimeInterval = 5

    /// The permissions of a SQLite database file this store creates: owner read/write, group read, nothing
    /// for others (see `SQLiteDatabase.newFileMode`).
    public static let newFileMode: mode_t = SQLiteDatabase.newFileMode

    /// Where the data is.
    public let location: StoreLocation

    let database: any StoreDatabase

    /// The time of each change: its audit entry, `updated_at`, and the floor of its content version. Tests
    /// inject a clock; the program uses the system clock.
    let clock: @Sendable () -> Date

    /// The SQLite file's path, or the PostgreSQL URL without its password: for messages.
    public var path: String { database.displayName }

    /// Opens the SQLite database at `path` for reading and writing, creating it (mode 0640 or tighter) if
    /// missing and applying any migrations this program has that the file lacks.
    ///
    /// - Throws: `StoreError` with code `.databaseTooNew` if the file records migrations this program does not
    ///   know, `.unrestoredBackup` if the file is a backup that was put in place without `restore`; a GRDB
    ///   `StoreError` (`.unavailable`, `.corruptData`) if the file cannot be opened or is not a database.
    public convenience init(path: String) throws {
        try self.init(location: .sqlite(path: path), readOnly: false, busyTimeout: Self.defaultBusyTimeout)
    }

    /// Opens the SQLite database at `path`.
    ///
    /// A read-only store neither creates the file nor migrates it; it requires a file whose migrations are
    /// all applied, and every write method fails with a `StoreError` (`.unavailable`). Only a read-only
    /// store opens a backup that was not restored (see `BackupMarker`).
    public static func open(path: String, readOnly: Bool = false, busyTimeout: TimeInterval = defaultBusyTimeout) throws -> PinStore {
        try PinStore(location: .sqlite(path: path), readOnly: readOnly, busyTimeout: busyTimeout)
    }

    /// Opens the store at `location`, creating and migrating its schema unless `readOnly`.
    ///
    /// - Throws: `StoreError` with code `.databaseTooNew`, `.databaseNotMigrated` (read-only, no schema yet),
    ///   `.unrestoredBackup`, or `.unavailable` when a database server cannot be reached.
    public static func open(_ location: StoreLocation, readOnly: Bool = false) throws -> PinStore {
        try PinStore(location: location, readOnly: readOnly, busyTimeout: defaultBusyTimeout)
    }

    init(location: StoreLocation, readOnly: Bool = false, busyTimeout: TimeInterval = defaultBusyTimeout,
         allowingUnrestoredBackup: Bool = false, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.location = location
        self.clock = clock
        database = CredentialCheckedDatabase(base: try location.openDatabase(readOnly: readOnly, busyTimeout: busyTimeout), clock: clock)
        if !readOnly && !allowingUnrestoredBackup, let marker = try database.read(BackupMarker.read) {
            try? database.close()
            throw StoreError.unrestoredBackup(database.displayName, marker)
        }
    }

    convenience init(path: String, readOnly: Bool = false, busyTimeout: TimeInterval = defaultBusyTimeout,
                     allowingUnrestoredBackup: Bool = false, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        try self.init(location: .sqlite(path: path), readOnly: readOnly, busyTimeout: busyTimeout,
                      allowingUnrestoredBackup: allowingUnrestoredBackup, clock: clock)
    }

    /// The identifiers of the migrations recorded in the database, in the order they were applied.
    public func appliedMigrations() throws -> [String] {
        try database.appliedMigrations()
    }

    /// Closes the store's connections. Later calls fail.
    public func close() throws {
        try database.close()
    }
}
