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
final class PostgresDatabase: StoreDatabase, @unchecked Sendable {
    // `@unchecked Sendable`: `idle`, `openConnections`, `nextConnectionID` and `closed` are touched only while
    // holding `slots`.

    /// Advisory lock keys, in PostgreSQL's one shared 64-bit key space: "pinset" in ASCII, then a purpose byte.
    static let writeLockKey: Int64 = 0x70_69_6E_73_65_74_01
    static let migrationLockKey: Int64 = 0x70_69_6E_73_65_74_02
    /// Connections one store opens at most: one each for a server's re-signing, host monitor and report writer,
    /// and one to spare. The change listener has its own.
    static let maximumConnections = 4
    /// Shown in `pg_stat_activity`, so that operators can tell Pinset's connections apart.
    static let applicationName = "pinset"

    let location: PostgresLocation
    let readOnly: Bool
    var displayName: String { location.description }
    var dialect: SQLDialect { .postgreSQL }

    private let tls: PostgresConnection.Configuration.TLS
    private let slots = NSCondition()
    /// Oldest first; the most recently returned is reused first.
    private var idle: [(connection: PostgresConnection, since: ContinuousClock.Instant)] = []
    /// Idle, in use and being opened.
    private var openConnections = 0
    private var nextConnectionID = 1
    private var closed = false
    private let logger = Logger(label: "pinset.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    init(location: PostgresLocation, readOnly: Bool) throws {
        self.location = location
        self.readOnly = readOnly
        // Once: every connection, the listener's reconnects included, shares the context and its roots file.
        tls = try Self.tls(for: location, displayName: location.description)
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

    deinit {
        // A store released without `close()`: the connections must stay alive until they have closed.
        for entry in idle { Self.closeInBackground(entry.connection) }
    }

    func read<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    func write<T>(_ body: (any StoreConnection) throws -> T) throws -> T {
        guard !readOnly else {
            throw StoreError(.invalidInput, "The database \(displayName) was opened read-only; this command cannot change it.")
        }
        return try transaction(begin: "BEGIN", lockKey: Self.writeLockKey, body)
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
            location: location, configuration: { self.configuration(applicationName: PostgresChangeListener.applicationName) }, onChange: onChange
        )
    }

    /// Closes the idle connections now, and those in use when their transaction ends.
    func close() throws {
        let closing = slots.withLock { () -> [PostgresConnection] in
            closed = true
            openConnections -= idle.count
            defer {
                idle = []
                // Threads waiting for a connection learn that the store is closed.
                slots.broadcast()
            }
            return idle.map(\.connection)
        }
        var firstError: (any Error)?
        for connection in closing {
            do { try connection.close().wait() } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    private func transaction<T>(begin: String, lockKey: Int64? = nil, _ body: (any StoreConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        var reusable = true
        defer { checkIn(connection, reusable: reusable) }
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
        let connection = try checkOut()
        var succeeded = false
        defer { checkIn(connection, reusable: succeeded) }
        let result = try body(connection)
        succeeded = true
        return result
    }

    /// An idle connection, or a new one while fewer than `maximumConnections` are open; otherwise waits for
    /// one to be returned, at most the answer timeout.
    private func checkOut() throws -> PostgresConnection {
        enum Slot {
            case idle(PostgresConnection)
            case new(id: Int)
        }
        let deadline = Date(timeIntervalSinceNow: location.answerTimeout)
        let slot = try slots.withLock { () throws -> Slot in
            while true {
                guard !closed else { throw StoreError.unavailable(displayName, "the store was closed") }
                let now = ContinuousClock.now
                // A firewall or load balancer may have dropped a connection idle for long without a word, and a
                // transaction on it would wait the whole answer timeout to find out. The change-counter poll
                // keeps the most recently used one busy twice a second.
                while let oldest = idle.first, now - oldest.since > .seconds(location.maximumIdleTime) {
                    idle.removeFirst()
                    openConnections -= 1
                    Self.closeInBackground(oldest.connection)
                }
                while let entry = idle.popLast() {
                    if !entry.connection.isClosed { return .idle(entry.connection) }
                    // Closed while idle (a server restart): its slot is free again.
                    openConnections -= 1
                }
                if openConnections < Self.maximumConnections {
                    openConnections += 1
                    nextConnectionID += 1
                    return .new(id: nextConnectionID - 1)
                }
                guard slots.wait(until: deadline) else {
                    throw StoreError.unavailable(displayName, "all \(Self.maximumConnections) of this process's connections stayed busy for \(Int(location.answerTimeout)) s")
                }
            }
        }
        switch slot {
        case .idle(let connection):
            return connection
        case .new(let id):
            do {
                return try connect(id: id)
            } catch {
                slots.withLock {
                    openConnections -= 1
                    slots.signal()
                }
                throw error
            }
        }
    }

    /// Returns a connection taken by `checkOut`: kept for the next transaction if `reusable`, closed otherwise.
    private func checkIn(_ connection: PostgresConnection, reusable: Bool) {
        let keep = slots.withLock { () -> Bool in
            defer { slots.signal() }
            guard reusable, !closed, !connection.isClosed else {
                openConnections -= 1
                return false
            }
            idle.append((connection, ContinuousClock.now))
            return true
        }
        if !keep { Self.closeInBackground(connection) }
    }

    private func connect(id: Int) throws -> PostgresConnection {
        let connecting = PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration(), id: id, logger: logger
        )
        do {
            // The connect timeout covers TCP only; a server that accepts and then never answers the startup
            // would hang here without this one.
            return try connecting.wait(timeout: .nanoseconds(Int64(location.connectTimeout * 2e9))) {
                connecting.whenSuccess { late in Self.closeInBackground(late) }
            }
        } catch is AnswerTimeout {
            throw StoreError.unavailable(displayName, "no answer to the connection's startup within \(Int(location.connectTimeout * 2)) s")
        } catch {
            throw PostgresErrors.translate(error, database: displayName)
        }
    }

    /// Closes without waiting; the connection must stay alive until it has closed.
    static func closeInBackground(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in _ = connection }
    }

    func configuration(applicationName: String = PostgresDatabase.applicationName) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls
        )
        configuration.options.connectTimeout = .milliseconds(Int64(location.connectTimeout * 1000))
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }

    private static func tls(for location: PostgresLocation, displayName: String) throws -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch location.sslMode {
        case .disable: return .disable
        case .prefer, .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if let rootCertificate = location.sslRootCertificate {
            configuration.trustRoots = .file(rootCertificate)
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw StoreError(.invalidInput, "Cannot set up TLS for \(displayName): \(error). Check sslrootcert (\(location.sslRootCertificate ?? "not set")): it must be a readable PEM file of CA certificates.")
        }
        return location.sslMode == .prefer ? .prefer(context) : .require(context)
    }
}

/// The statements of one transaction on a PostgreSQL connection.
struct PostgresSession: StoreConnection {
    let connection: PostgresConnection
    let logger: Logger
    let database: String
    /// How long a statement may go unanswered before the connection is given up.
    var answerTimeout = PostgresLocation.defaultAnswerTimeout
    var dialect: SQLDialect { .postgreSQL }

    @discardableResult
    func execute(_ sql: String, _ arguments: [any SQLArgument]) throws -> Int {
        try run(sql, arguments).metadata.rows ?? 0
    }

    func forEachRow(_ sql: String, _ arguments: [any SQLArgument], _ body: (any StoreRow) throws -> Void) throws {
        for row in try run(sql, arguments).rows {
            try body(PostgresStoreRow(row: row.makeRandomAccess()))
        }
    }

    /// Runs a script of several statements (a migration), one statement at a time.
    func executeScript(_ sql: String) throws {
        for statement in SQLScript.statements(sql) {
            try execute(statement)
        }
    }

    private func run(_ sql: String, _ arguments: [any SQLArgument]) throws -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument.sqlValue {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        // Without arguments there is nothing to number, and a migration's function bodies may hold a `?`.
        let query = PostgresQuery(unsafeSQL: arguments.isEmpty ? sql : PostgresPlaceholders.numbered(sql), binds: bindings)
        let connection = self.connection
        do {
            // A server that stops answering (a network partition drops packets without a reset) would block
            // the caller — the re-signing loop among them — until TCP gives up, hours later.
            return try connection.query(query, logger: logger).wait(timeout: .nanoseconds(Int64(answerTimeout * 1e9))) {
                PostgresDatabase.closeInBackground(connection)
            }
        } catch is AnswerTimeout {
            throw StoreError.unavailable(database, "no answer within \(Int(answerTimeout)) s")
        } catch {
            throw PostgresErrors.translate(error, database: database)
        }
    }
}

struct AnswerTimeout: Error {}

extension EventLoopFuture where Value: Sendable {
    /// This future's result, or `AnswerTimeout` (after calling `onTimeout`) once `timeout` has passed.
    func timingOut(after timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) -> EventLoopFuture<Value> {
        let promise = eventLoop.makePromise(of: Value.self)
        let settled = NIOLockedValueBox(false)
        let settleOnce: @Sendable () -> Bool = {
            settled.withLockedValue { done in
                defer { done = true }
                return !done
            }
        }
        let timer = eventLoop.scheduleTask(in: timeout) {
            if settleOnce() {
                promise.fail(AnswerTimeout())
                onTimeout()
            }
        }
        whenComplete { result in
            timer.cancel()
            if settleOnce() { promise.completeWith(result) }
        }
        return promise.futureResult
    }

    /// Waits for the result, or throws `AnswerTimeout` (after calling `onTimeout`) once `timeout` has passed.
    func wait(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) throws -> Value {
        try timingOut(after: timeout, onTimeout: onTimeout).wait()
    }
}

/// A row of a PostgreSQL result, converted to the values SQLite would hold.
struct PostgresStoreRow: StoreRow {
    let row: PostgresRandomAccessRow
    var count: Int { row.count }

    func value(atIndex index: Int) throws -> SQLValue {
        guard index < row.count else {
            throw StoreError(.corruptData, "A query returned \(row.count) columns where at least \(index + 1) were expected.")
        }
        let cell = row[index]
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .int8: return .integer(try cell.decode(Int64.self))
            case .int4: return .integer(Int64(try cell.decode(Int32.self)))
            case .int2: return .integer(Int64(try cell.decode(Int16.self)))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .float8, .float4: return .real(try cell.decode(Double.self))
            case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            throw StoreError(.corruptData, "PostgreSQL returned a value of type \(cell.dataType) in column '\(cell.columnName)' that pinset cannot read.")
        }
    }
}

/// Splits a migration file into its statements at the semicolons that end them: not those inside quotes,
/// comments or `$$`-quoted function bodies.
enum SQLScript {
    static func statements(_ script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var characters = Array(script)[...]
        var meaningful = false
        func finish() {
            if meaningful { statements.append(current.trimmingCharacters(in: .whitespacesAndNewlines)) }
            current = ""
            meaningful = false
        }
        while let character = characters.popFirst() {
            switch character {
            case "-" where characters.first == "-":
                // A comment runs to the end of the line; it is left out.
                while let next = characters.popFirst(), next != "\n" {}
                current.append("\n")
            case "'", "\"":
                current.append(character)
                while let next = characters.popFirst() {
                    current.append(next)
                    if next == character { break }
                }
                meaningful = true
            case "$" where characters.first == "$":
                characters.removeFirst()
                current += "$$"
                while let next = characters.popFirst() {
                    current.append(next)
                    if next == "$" && characters.first == "$" {
                        characters.removeFirst()
                        current.append("$")
                        break
                    }
                }
                meaningful = true
            case ";":
                finish()
            default:
                current.append(character)
                if !character.isWhitespace { meaningful = true }
            }
        }
        finish()
        return statements
    }
}

/// Rewrites the store's `?` placeholders as PostgreSQL's `$1`, `$2`, …, leaving quoted text and comments alone.
enum PostgresPlaceholders {
    static func numbered(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 8)
        var number = 0
        var quote: Character?
        var inComment = false
        var previous: Character?
        for character in sql {
            defer { previous = character }
            if inComment {
                if character == "\n" { inComment = false }
            } else if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "-" && previous == "-" {
                inComment = true
            } else if character == "?" {
                number += 1
                result += "$\(number)"
                continue
            }
            result.append(character)
        }
        return result
    }
}

/// Turns PostgresNIO's errors into the store's: unreachable or refused servers into `.unavailable` (with the
/// server's own words, never the password), constraint violations into `SQLConstraintViolation`.
enum PostgresErrors {
    static func translate(_ error: any Error, database: String) -> any Error {
        if error is StoreError || error is SQLConstraintViolation { return error }
        guard let error = error as? PSQLError else {
            return StoreError.unavailable(database, "\(error)")
        }
        guard let info = error.serverInfo else {
            let underlying = error.underlying.map { ": \($0)" } ?? ""
            return StoreError.unavailable(database, "\(error.code)\(underlying)")
        }
        let state = info[.sqlState] ?? ""
        let message = info[.message] ?? "no message"
        let detail = info[.detail].map { " (\($0))" } ?? ""
        if state.hasPrefix("23") {
            return SQLConstraintViolation(message: message + detail)
        }
        // Connection exceptions, refused logins, a database that does not exist, a server shutting down.
        if state.hasPrefix("08") || state.hasPrefix("28") || state == "3D000" || state.hasPrefix("57P") || state == "53300" {
            return StoreError.unavailable(database, "\(message) (SQLSTATE \(state))")
        }
        return PostgresStatementError(database: database, state: state, message: message + detail)
    }
}

/// PostgreSQL refused a statement for a reason that is not about connecting or a constraint.
struct PostgresStatementError: Error, CustomStringConvertible {
    let database: String
    let state: String
    let message: String
    var description: String { "PostgreSQL (\(database)) refused a statement: \(message) (SQLSTATE \(state))." }
}
