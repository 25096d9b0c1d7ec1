import Foundation

/// Where a store keeps its data: the one place that knows which backends exist.
///
/// Given as `--database` or `database` in the server's configuration: a `postgres://` or `postgresql://` URL
/// selects PostgreSQL; anything else — a path, or `sqlite:` followed by a path — selects SQLite.
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    case sqlite(path: String)
    case postgreSQL(PostgresLocation)

    /// Parses a `--database` value.
    ///
    /// - Throws: `StoreError.invalidInput` for an empty value or a PostgreSQL URL that does not parse (the
    ///   message never repeats a password the URL carries).
    public init(parsing value: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let lowered = value.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgreSQL(try PostgresLocation(url: value, environment: environment))
            return
        }
        let path = lowered.hasPrefix("sqlite:") ? String(value.dropFirst("sqlite:".count)) : value
        guard !path.isEmpty else {
            throw StoreError(.invalidInput, "The database location is empty. Give a SQLite file path (e.g. /var/lib/pinset/pinset.sqlite) or a PostgreSQL URL (e.g. postgres://pinset@db.internal:5432/pinset).")
        }
        self = .sqlite(path: path)
    }

    /// The SQLite file's path, or `nil` for a database server.
    public var filePath: String? {
        if case .sqlite(let path) = self { return path }
        return nil
    }

    /// For messages and logs: the path, or the URL without any password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgreSQL(let location): location.description
        }
    }

    func openDatabase(readOnly: Bool, busyTimeout: TimeInterval) throws -> any StoreDatabase {
        switch self {
        case .sqlite(let path): try SQLiteDatabase(path: path, readOnly: readOnly, busyTimeout: busyTimeout)
        case .postgreSQL(let location): try PostgresDatabase(location: location, readOnly: readOnly)
        }
    }
}
