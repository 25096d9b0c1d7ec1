import Foundation
import PinsetAdminContract

/// A PostgreSQL database as libpq users name it: `postgres://user@host:5432/database?sslmode=verify-full`.
///
/// The password is looked up the way libpq does, except that a URL carrying one is refused: on a command line
/// every local user reads it in the process list, and in a configuration file everyone who can read the file.
/// It comes from `PGPASSWORD`, else the matching line of the password file (`PGPASSFILE`, default `~/.pgpass`,
/// ignored unless only its owner can read it). `PGUSER`, `PGHOST`,
/// `PGPORT`, `PGDATABASE`, `PGSSLMODE` and `PGSSLROOTCERT` fill in what the URL leaves out.
///
/// The database's content is what the server signs, so its connection fails closed: without an sslmode,
/// a server on another host must present a certificate valid for its name (`verify-full`); only a server on
/// this host (a loopback address or `localhost`) defaults to libpq's `prefer`.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// TLS, without checking the certificate.
        case require
        /// TLS, with a certificate issued by `sslrootcert` (or the system roots), for any host name.
        case verifyCA = "verify-ca"
        /// TLS, with a certificate issued by `sslrootcert` (or the system roots) for `host`.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    public var sslMode: SSLMode
    /// PEM file of the CAs that may issue the server's certificate, for `verify-ca` and `verify-full`.
    public var sslRootCertificate: String?
    /// How long to wait for the server to accept a connection.
    public var connectTimeout: TimeInterval
    /// Never printed: `description` leaves it out.
    var password: String?
    /// How long a statement may go unanswered (a server behind a network partition) before the connection is
    /// given up. Not a libpq setting; tests shorten it.
    var answerTimeout = Self.defaultAnswerTimeout
    static let defaultAnswerTimeout: TimeInterval = 30
    /// How long a write waits for another writer (on any host) to finish; shorter than `answerTimeout`.
    var writeLockWait = 20
    /// How often the change listener checks that its connection still answers.
    var listenerHeartbeatInterval: TimeInterval = 10
    /// How long a pooled connection may sit idle before it is closed instead of reused.
    var maximumIdleTime: TimeInterval = 60

    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func refuse(_ problem: String) -> StoreError {
            StoreError(.invalidInput, "The PostgreSQL URL \(Self.redacted(url)) \(problem). Use the form postgres://USER@HOST:PORT/DATABASE?sslmode=verify-full, with the password in PGPASSWORD or ~/.pgpass.")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "postgres" || scheme == "postgresql"
        else { throw refuse("does not parse") }
        if components.password != nil || components.queryItems?.contains(where: { $0.name == "password" }) == true {
            throw StoreError(.invalidInput, "The PostgreSQL URL \(Self.redacted(url)) contains a password. Nothing was opened. A password in the URL is readable by every user of this host while a command runs (in the process list) and by everyone who can read the configuration file. Remove it from the URL and give it in the PGPASSWORD environment variable, in a password file named by PGPASSFILE, or in ~/.pgpass (mode 0600, lines HOST:PORT:DATABASE:USER:PASSWORD).")
        }

        let host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGHOST"] ?? "localhost"
        guard !host.hasPrefix("/") else { throw refuse("names a Unix socket directory; give a TCP host name or address") }
        self.host = host
        if let port = components.port {
            guard (1...65535).contains(port) else { throw refuse("has the invalid port \(port)") }
            self.port = port
        } else if let text = environment["PGPORT"] {
            guard let port = Int(text), (1...65535).contains(port) else { throw refuse("has no port, and PGPORT='\(text)' is not a port") }
            self.port = port
        } else {
            self.port = 5432
        }
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGUSER"] ?? environment["USER"] ?? ""
        guard !user.isEmpty else { throw refuse("names no user, and PGUSER is not set") }
        self.user = user
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let database = path.isEmpty ? (environment["PGDATABASE"] ?? user) : path
        guard !database.contains("/") else { throw refuse("has a path with more than a database name") }
        self.database = database

        var sslMode: SSLMode?
        if let text = environment["PGSSLMODE"] {
            guard let mode = SSLMode(rawValue: text) else {
                throw refuse("comes with PGSSLMODE=\(text), which is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            sslMode = mode
        }
        var rootCertificate = environment["PGSSLROOTCERT"]
        var connectTimeout: TimeInterval = 10
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = SSLMode(rawValue: value) else {
                    throw refuse("has sslmode=\(item.value ?? ""), which is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                sslMode = mode
            case "sslrootcert":
                rootCertificate = item.value
            case "connect_timeout":
                guard let value = item.value, let seconds = Int(value), (1...600).contains(seconds) else {
                    throw refuse("has connect_timeout=\(item.value ?? ""); give whole seconds from 1 to 600")
                }
                connectTimeout = TimeInterval(seconds)
            default:
                throw refuse("has the parameter '\(item.name)', which pinset does not support (supported: sslmode, sslrootcert, connect_timeout)")
            }
        }
        let resolvedMode = sslMode ?? (Self.isLoopback(host) ? .prefer : .verifyFull)
        if resolvedMode == .verifyCA && rootCertificate == nil {
            // Without its own CA, verify-ca would accept any certificate a public CA issued, for any name.
            throw refuse("has sslmode=verify-ca without sslrootcert; give the CA that issues the database's certificate (sslrootcert=/path/ca.pem), or use verify-full")
        }
        self.sslMode = resolvedMode
        self.sslRootCertificate = rootCertificate
        self.connectTimeout = connectTimeout
        // An empty PGPASSWORD is no password, as for libpq: the password file is read.
        password = environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
            ?? Self.passwordFromFile(environment: environment, host: host, port: self.port, database: database, user: user)
    }

    /// A URL may spell an IPv6 host in brackets.
    static func isLoopback(_ host: String) -> Bool {
        LoopbackHost.contains(host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host)
    }

    /// `postgres://user@host:port/database`, without the password.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        var text = "postgres://\(user)@\(hostPart):\(port)/\(database)"
        if sslMode != .prefer || !Self.isLoopback(host) { text += "?sslmode=\(sslMode.rawValue)" }
        return text
    }

    /// The URL with any password (user information or `password=` parameter) replaced, for error messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(given)" }
        if components.password != nil { components.password = "REDACTED" }
        if let items = components.queryItems {
            components.queryItems = items.map { $0.name == "password" ? URLQueryItem(name: $0.name, value: "REDACTED") : $0 }
        }
        return components.string ?? "(given)"
    }

    /// The password of the first line of the password file matching this connection, as libpq reads it:
    /// `host:port:database:user:password`, `*` matching anything, `\` escaping `:` and `\`.
    static func passwordFromFile(environment: [String: String], host: String, port: Int, database: String, user: String) -> String? {
        guard let file = environment["PGPASSFILE"] ?? environment["HOME"].map({ $0 + "/.pgpass" }) else { return nil }
        var info = stat()
        // libpq ignores a password file that others can read; so does pinset.
        guard stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 == 0,
              let contents = try? String(contentsOfFile: file, encoding: .utf8)
        else { return nil }
        for line in contents.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            var fields: [String] = [""]
            var escaped = false
            for character in line {
                if escaped {
                    fields[fields.count - 1].append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == ":" && fields.count < 5 {
                    fields.append("")
                } else {
                    fields[fields.count - 1].append(character)
                }
            }
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }
}
