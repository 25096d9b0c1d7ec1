import Foundation

/// The database under a `PinStore`: SQLite embedded, or a shared PostgreSQL server.
///
/// The store's logic — what each change checks, how versions rise, what is audited — is written once, as SQL
/// that both backends accept, against `StoreConnection`. A backend contributes only what really differs: how
/// it connects, runs a transaction and migrates, its few dialect spellings (`SQLDialect`), and how it copies
/// itself into a backup file.
protocol StoreDatabase: Sendable {
    /// What to call the database in messages: a file path, or a PostgreSQL URL without its password.
    var displayName: String { get }
    var dialect: SQLDialect { get }

    /// Runs `body` in a read-only transaction: a consistent snapshot.
    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T

    /// Runs `body` in a write transaction that commits when it returns and rolls back when it throws. Writes
    /// are serialised across every process using the database, so a version read inside the transaction is
    /// still the latest when it commits.
    func write<T>(_ body: (any StoreConnection) throws -> T) throws -> T

    /// The identifiers of the migrations recorded in the database, in the order they were applied.
    func appliedMigrations() throws -> [String]

    /// Writes a consistent copy of the whole database as a new SQLite file at `path` (which does not exist
    /// yet), while other connections keep reading and writing.
    func copy(toSQLiteFile path: String) throws

    /// Pushes a call to `onChange` after every committed change, if the backend can; see
    /// `PinStore.observeChanges`.
    func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)?

    func close() throws
}

/// One connection inside a transaction. SQL uses `?` placeholders, bound in order to `arguments`.
protocol StoreConnection {
    var dialect: SQLDialect { get }

    /// Runs a statement that returns no rows; returns how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int

    /// Runs a query and hands each row to `body`, in order.
    func forEachRow(_ sql: String, _ arguments: [any SQLArgument], _ body: (any StoreRow) throws -> Void) throws
}

extension StoreConnection {
    @discardableResult
    func execute(_ sql: String) throws -> Int {
        try execute(sql, [])
    }

    func fetchAll<T>(_ sql: String, _ arguments: [any SQLArgument] = [], _ decode: (any StoreRow) throws -> T) throws -> [T] {
        var results: [T] = []
        try forEachRow(sql, arguments) { results.append(try decode($0)) }
        return results
    }

    /// The first row, decoded, or `nil` when the query returns none.
    func fetchOne<T>(_ sql: String, _ arguments: [any SQLArgument] = [], _ decode: (any StoreRow) throws -> T) throws -> T? {
        var result: T?
        try forEachRow(sql, arguments) { row in
            if result == nil { result = try decode(row) }
        }
        return result
    }

    /// The first column of the first row; `nil` when there is no row or the value is NULL.
    func fetchValue<T: SQLDecodable>(_ type: T.Type, _ sql: String, _ arguments: [any SQLArgument] = []) throws -> T? {
        try fetchOne(sql, arguments) { try $0.decode(T?.self, atIndex: 0) } ?? nil
    }

    /// Runs an `INSERT … RETURNING id` and returns the new row's id.
    func insertReturningID(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int64 {
        guard let id = try fetchValue(Int64.self, sql + " RETURNING id", arguments) else {
            throw StoreError(.corruptData, "The database returned no id for a new row.")
        }
        return id
    }
}

/// One row of a query's result, read by column position.
protocol StoreRow {
    var count: Int { get }
    func value(atIndex index: Int) throws -> SQLValue
}

extension StoreRow {
    func decode<T: SQLDecodable>(_ type: T.Type = T.self, atIndex index: Int) throws -> T {
        let value = try value(atIndex: index)
        guard let decoded = T(sqlValue: value) else {
            throw StoreError(.corruptData, "A stored value (\(value.description)) in column \(index + 1) is not a valid \(T.self). The database was edited by hand or is damaged.")
        }
        return decoded
    }
}

/// A value as the store binds and reads it. Both backends hold the same five kinds.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): "integer \(value)"
        case .real(let value): "real \(value)"
        case .text(let value): "text '\(value.prefix(40))'"
        case .blob(let bytes): "\(bytes.count)-byte blob"
        }
    }
}

/// A Swift value the store binds to a `?` placeholder.
protocol SQLArgument {
    var sqlValue: SQLValue { get }
}

/// A Swift value the store reads from a column; `nil` from `init` means the column held something else.
protocol SQLDecodable {
    init?(sqlValue: SQLValue)
}

extension Int64: SQLArgument, SQLDecodable {
    var sqlValue: SQLValue { .integer(self) }
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = value
    }
}

extension Int: SQLArgument, SQLDecodable {
    var sqlValue: SQLValue { .integer(Int64(self)) }
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue, let int = Int(exactly: value) else { return nil }
        self = int
    }
}

/// Stored as 0 or 1, as the schema's CHECK constraints require on both backends.
extension Bool: SQLArgument, SQLDecodable {
    var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue, value == 0 || value == 1 else { return nil }
        self = value == 1
    }
}

extension String: SQLArgument, SQLDecodable {
    var sqlValue: SQLValue { .text(self) }
    init?(sqlValue: SQLValue) {
        guard case .text(let value) = sqlValue else { return nil }
        self = value
    }
}

extension Array: SQLArgument, SQLDecodable where Element == UInt8 {
    var sqlValue: SQLValue { .blob(self) }
    init?(sqlValue: SQLValue) {
        guard case .blob(let bytes) = sqlValue else { return nil }
        self = bytes
    }
}

/// Stored as UTC text (see `StoredDate`), the form the SQLite schema has always used.
extension Date: SQLArgument, SQLDecodable {
    var sqlValue: SQLValue { .text(StoredDate.format(self)) }
    init?(sqlValue: SQLValue) {
        guard case .text(let text) = sqlValue, let date = StoredDate.parse(text) else { return nil }
        self = date
    }
}

extension Optional: SQLArgument where Wrapped: SQLArgument {
    var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
            return
        }
        guard let value = Wrapped(sqlValue: sqlValue) else { return nil }
        self = .some(value)
    }
}
