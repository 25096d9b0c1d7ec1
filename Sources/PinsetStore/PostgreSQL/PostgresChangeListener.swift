import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// LISTENs on the channel the schema's trigger notifies on every committed change (`pinset_change`, see
/// migration 0001), on a connection of its own, and connects again a second after losing it.
///
/// A network partition that drops packets leaves the socket open and silent, and TCP keepalive would notice
/// only after the kernel's default of two hours. So connecting and `LISTEN` are bounded like the store's own
/// statements, and the connection is asked every `heartbeatInterval` whether it still answers; one that does
/// not within the answer timeout is closed and replaced. Until then the change-counter poll still brings edits.
final class PostgresChangeListener: ChangeObservation, @unchecked Sendable {
    // `@unchecked Sendable`: `connection`, `heartbeat` and `cancelled` are touched only while holding `lock`.

    static let channel = "pinset_change"
    static let applicationName = "pinset change listener"
    static let reconnectDelay = TimeAmount.seconds(1)

    private let configuration: @Sendable () throws -> PostgresConnection.Configuration
    private let connectTimeout: TimeAmount
    private let answerTimeout: TimeAmount
    private let heartbeatInterval: TimeAmount
    private let onChange: @Sendable () -> Void
    private let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    private let logger = Logger(label: "pinset.store.postgres.listen", factory: { _ in SwiftLogNoOpLogHandler() })
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private var heartbeat: RepeatedTask?
    private var cancelled = false

    private init(
        location: PostgresLocation, configuration: @escaping @Sendable () throws -> PostgresConnection.Configuration,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        // Like the store's: twice the TCP connect timeout for the whole startup.
        self.connectTimeout = .nanoseconds(Int64(location.connectTimeout * 2e9))
        self.answerTimeout = .nanoseconds(Int64(location.answerTimeout * 1e9))
        self.heartbeatInterval = .nanoseconds(Int64(location.listenerHeartbeatInterval * 1e9))
        self.onChange = onChange
    }

    static func start(
        location: PostgresLocation, configuration: @escaping @Sendable () throws -> PostgresConnection.Configuration,
        onChange: @escaping @Sendable () -> Void
    ) -> PostgresChangeListener {
        let listener = PostgresChangeListener(location: location, configuration: configuration, onChange: onChange)
        listener.connect()
        return listener
    }

    deinit {
        // Released without `cancel()`: the heartbeat holds the connection and would keep it open.
        heartbeat?.cancel()
        if let connection { PostgresDatabase.closeInBackground(connection) }
    }

    func cancel() {
        let (open, heartbeat) = lock.withLock { () -> (PostgresConnection?, RepeatedTask?) in
            cancelled = true
            defer {
                connection = nil
                self.heartbeat = nil
            }
            return (connection, self.heartbeat)
        }
        heartbeat?.cancel()
        if let open { PostgresDatabase.closeInBackground(open) }
    }

    private func connect() {
        guard !lock.withLock({ cancelled }) else { return }
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try self.configuration()
        } catch {
            // The store reports the same error on every transaction; the poll carries on meanwhile.
            reconnectLater()
            return
        }
        let connecting = PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 0, logger: logger)
        connecting
            .timingOut(after: connectTimeout) {
                connecting.whenSuccess { late in PostgresDatabase.closeInBackground(late) }
            }
            .flatMap { connection -> EventLoopFuture<PostgresConnection> in
                connection.addListener(channel: Self.channel) { [weak self] _, _ in self?.onChange() }
                return connection.query(PostgresQuery(unsafeSQL: "LISTEN \(Self.channel)"), logger: self.logger)
                    .timingOut(after: self.answerTimeout) { PostgresDatabase.closeInBackground(connection) }
                    .map { _ in connection }
                    .flatMapError { error in connection.close().flatMapThrowing { throw error } }
            }
            .whenComplete { [weak self] result in
                guard let self else {
                    if case .success(let connection) = result { PostgresDatabase.closeInBackground(connection) }
                    return
                }
                switch result {
                case .success(let connection):
                    let keep = self.lock.withLock { () -> Bool in
                        guard !self.cancelled else { return false }
                        self.connection = connection
                        self.heartbeat = self.startHeartbeat(connection)
                        return true
                    }
                    guard keep else {
                        PostgresDatabase.closeInBackground(connection)
                        return
                    }
                    // Changes committed while no connection listened were missed: report one now.
                    self.onChange()
                    connection.closeFuture.whenComplete { [weak self] _ in self?.reconnectLater() }
                case .failure:
                    self.reconnectLater()
                }
            }
    }

    /// Asks the connection every `heartbeatInterval` to answer; closes it (and so reconnects) when it does not.
    private func startHeartbeat(_ connection: PostgresConnection) -> RepeatedTask {
        eventLoop.scheduleRepeatedAsyncTask(initialDelay: heartbeatInterval, delay: heartbeatInterval) { [logger, answerTimeout] _ in
            connection.query(PostgresQuery(unsafeSQL: "SELECT 1"), logger: logger)
                .timingOut(after: answerTimeout) {}
                .map { _ in }
                .flatMapError { _ in
                    PostgresDatabase.closeInBackground(connection)
                    return connection.eventLoop.makeSucceededVoidFuture()
                }
        }
    }

    private func reconnectLater() {
        let heartbeat = lock.withLock { () -> RepeatedTask? in
            connection = nil
            defer { self.heartbeat = nil }
            return self.heartbeat
        }
        heartbeat?.cancel()
        eventLoop.scheduleTask(in: Self.reconnectDelay) { [weak self] in self?.connect() }
    }
}
