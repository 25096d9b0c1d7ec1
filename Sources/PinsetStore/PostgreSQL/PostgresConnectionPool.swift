import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// The connections of one PostgreSQL store: at most `maximumConnections` open, the most recently returned
/// reused first, those idle for too long or closed by the server dropped, and new ones made on demand.
final class PostgresConnectionPool: @unchecked Sendable {
    // `@unchecked Sendable`: `idle`, `openConnections`, `nextConnectionID` and `closed` are touched only while
    // holding `slots`.

    /// Connections one store opens at most: one each for a server's re-signing, host monitor and report writer,
    /// and one to spare. The change listener has its own.
    static let maximumConnections = 4

    let location: PostgresLocation
    private var displayName: String { location.description }
    private let logger: Logger
    private let tls: PostgresConnection.Configuration.TLS
    private let slots = NSCondition()
    /// Oldest first; the most recently returned is reused first.
    private var idle: [(connection: PostgresConnection, since: ContinuousClock.Instant)] = []
    /// Idle, in use and being opened.
    private var openConnections = 0
    private var nextConnectionID = 1
    private var closed = false

    init(location: PostgresLocation, logger: Logger) throws {
        self.location = location
        self.logger = logger
        // Once: every connection, the listener's reconnects included, shares the context and its roots file.
        tls = try Self.tls(for: location, displayName: location.description)
    }

    deinit {
        // A store released without `close()`: the connections must stay alive until they have closed.
        for entry in idle { Self.closeInBackground(entry.connection) }
    }

    /// Closes the idle connections now, and those in use when they are returned.
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

    /// An idle connection, or a new one while fewer than `maximumConnections` are open; otherwise waits for
    /// one to be returned, at most the answer timeout.
    func checkOut() throws -> PostgresConnection {
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
    func checkIn(_ connection: PostgresConnection, reusable: Bool) {
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
