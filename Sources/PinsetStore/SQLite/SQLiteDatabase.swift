import Foundation
import PinsetFileSystem
import GRDB

/// The embedded backend: one SQLite file in WAL mode, shared by `pinset serve` and the admin commands on one
/// machine.
///
/// WAL lets readers proceed during a write, and a busy timeout makes a writer wait for another process's write
/// instead of failing with `SQLITE_BUSY`. Writes run in `IMMEDIATE` transactions (GRDB's default for writes),
/// so they never fail on upgrading a read lock, and are serialised across processes by SQLite's file lock.
final class SQLiteDatabase: StoreDatabase {
    /// The permissions of a database file this store creates: owner read/write, group read (for a server
    /// running under a different user in the owner's group), nothing for others. The process umask can only
    /// tighten this. SQLite gives the `-wal` and `-shm` files the same permissions as the database.
    static let newFileMode: mode_t = 0o640

    let path: String
    let pool: DatabasePool
    let busyTimeout: TimeInterval
    var displayName: String { path }
    var dialect: SQLDialect { .sqlite }

    /// Opens (and, unless `readOnly`, creates with `newFileMode` and migrates) the file at `path`.
    convenience init(path: String, readOnly: Bool, busyTimeout: TimeInterval) throws {
        do {
            try self.init(opening: path, readOnly: readOnly, busyTimeout: busyTimeout)
        } catch {
            throw SQLiteFailure.explained(error, path: path, busyTimeout: busyTimeout)
        }
    }

    private init(opening path: String, readOnly: Bool, busyTimeout: TimeInterval) throws {
        self.path = path
        self.busyTimeout = busyTimeout
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
        pool = try Self.openPool(path: path, configuration: configuration, busyTimeout: busyTimeout)

        let migrator = SchemaMigrator.make()
        if try pool.read(migrator.hasBeenSuperseded) {
            let known = Set(SchemaMigrator.identifiers)
            let unknown = try pool.read(migrator.appliedIdentifiers).subtracting(known).sorted()
            throw StoreError.databaseTooNew(path, unknown: unknown)
        }
        if readOnly {
            guard try pool.read(migrator.hasCompletedMigrations) else {
                throw StoreError(.databaseNotMigrated, "The database \(path) has no complete Pinset schema. Open it once read-write (any 'pinset' admin command) to create or upgrade the schema.")
            }
        } else {
            try SchemaMigrator.migrate(pool, with: migrator)
        }
    }

    /// Opening switches a new file to WAL, which needs an exclusive lock that SQLite does not wait for through the
    /// busy handler: two processes opening the same new file at once can get SQLITE_BUSY there. Opening is tried
    /// again until the busy timeout has passed, as any other locked write would wait.
    private static func openPool(path: String, configuration: Configuration, busyTimeout: TimeInterval) throws -> DatabasePool {
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        do {
            return try pool.read { db in try body(SQLiteConnection(db: db)) }
        } catch {
            throw SQLiteFailure.explained(error, path: path, busyTimeout: busyTimeout)
        }
    }

    func write<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        do {
            return try pool.write { db in try body(SQLiteConnection(db: db)) }
        } catch {
            throw SQLiteFailure.explained(error, path: path, busyTimeout: busyTimeout)
        }
    }

    func appliedMigrations() throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
    }

    /// SQLite's online backup API: one consistent snapshot while other connections keep reading and writing.
    func copy(toSQLiteFile path: String) throws {
        let copy = try DatabaseQueue(path: path)
        try pool.backup(to: copy)
        try copy.close()
    }

    /// SQLite has no notifications across processes; the server polls the change counter.
    func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)? {
        nil
    }

    func close() throws {
        try pool.close()
    }

    /// Creates an empty file with `newFileMode` so that SQLite, which would create it with 0644 minus umask,
    /// opens a file that was never world-readable. An existing file is left as it is.
    private static func createFileIfMissing(_ path: String) throws {
        do {
            try AtomicFile.createEmptyIfMissing(path, mode: newFileMode)
        } catch {
            throw StoreError(.invalidInput, "Cannot create the database file \(path): \(String(cString: strerror(error.errno))). Check that the directory exists and is writable.")
        }
    }
}

/// A GRDB connection inside one of `SQLiteDatabase`'s transactions.
struct SQLiteConnection: StoreConnection {
    let db: Database
    var dialect: SQLDialect { .sqlite }

    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int {
        do {
            try db.execute(sql: sql, arguments: Self.statementArguments(arguments))
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw SQLConstraintViolation(message: error.message ?? "\(error)")
        }
        return db.changesCount
    }

    func forEachRow(_ sql: String, _ arguments: [any SQLArgument], _ body: (any StoreRow) throws -> Void) throws {
        let rows = try Row.fetchCursor(db, sql: sql, arguments: Self.statementArguments(arguments))
        while let row = try rows.next() {
            try body(SQLiteRow(row: row))
        }
    }

    static func statementArguments(_ arguments: [any SQLArgument]) -> StatementArguments {
        StatementArguments(arguments.map { argument -> DatabaseValue in
            switch argument.sqlValue {
            case .null: .null
            case .integer(let value): value.databaseValue
            case .real(let value): value.databaseValue
            case .text(let value): value.databaseValue
            case .blob(let bytes): Data(bytes).databaseValue
            }
        })
    }
}

/// A row of a GRDB cursor; valid only until the cursor moves on.
struct SQLiteRow: StoreRow {
    let row: Row
    var count: Int { row.count }

    func value(atIndex index: Int) throws -> SQLValue {
        guard index < row.count else {
            throw StoreError(.corruptData, "A query returned \(row.count) columns where at least \(index + 1) were expected.")
        }
        if row.hasNull(atIndex: index) { return .null }
        let value: DatabaseValue = row[index]
        switch value.storage {
        case .null: return .null
        case .int64(let integer): return .integer(integer)
        case .double(let real): return .real(real)
        case .string(let text): return .text(text)
        // Copied once, straight from SQLite's buffer.
        case .blob: return .blob(try row.decode(StoredBytes.self, atIndex: index).bytes)
        }
    }
}

extension PinStore {
    /// The GRDB pool of a SQLite store, for tests that read or damage the file directly.
    var pool: DatabasePool {
        guard let sqlite = (database as? CredentialCheckedDatabase)?.base as? SQLiteDatabase else {
            preconditionFailure("\(path) is not a SQLite store")
        }
        return sqlite.pool
    }
}
