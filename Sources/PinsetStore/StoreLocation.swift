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
    /// - Throws: `StoreError.invalidInput` for an empty value, a PostgreSQL URL that does not parse or carries
    ///   a password, or a libpq key/value string (the message never repeats a password).
    public init(parsing value: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let lowered = value.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgreSQL(try PostgresLocation(url: value, environment: environment))
            return
        }
        // libpq's key/value form would otherwise name a SQLite file, and its password= would be passed around
        // as a path (and printed as one).
        let conninfoKeys = ["host=", "hostaddr=", "port=", "dbname=", "user=", "password=", "sslmode="]
        let words = lowered.split(whereSeparator: \.isWhitespace)
        if !lowered.hasPrefix("sqlite:"), words.contains(where: { word in conninfoKeys.contains { word.hasPrefix($0) } }) {
            let password = words.contains { $0.hasPrefix("password=") }
                ? " It contains a password, which every user of this host can read in the process list and everyone who can read the configuration file can read there; give it in the PGPASSWORD environment variable, in a password file named by PGPASSFILE, or in ~/.pgpass (mode 0600) instead."
                : ""
            throw StoreError(.invalidInput, "The database location is a key/value connection string (host=… dbname=…), which pinset does not read.\(password) Nothing was opened. Give a PostgreSQL URL without a password, e.g. postgres://pinset@db.internal:5432/pinset?sslmode=verify-full, or a SQLite file path.")
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
