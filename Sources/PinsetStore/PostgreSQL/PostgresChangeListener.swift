import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// LISTENs on the channel the schema's trigger notifies on every committed change (`pinset_change`, see
/// migration 0001), on a connection of its own, and connects again a second after losing it.
final class PostgresChangeListener: ChangeObservation, @unchecked Sendable {
    // `@unchecked Sendable`: `connection` and `cancelled` are touched only while holding `lock`.

    static let channel = "pinset_change"
    static let reconnectDelay = TimeAmount.seconds(1)

    private let configuration: @Sendable () throws -> PostgresConnection.Configuration
    private let onChange: @Sendable () -> Void
    private let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    private let logger = Logger(label: "pinset.store.postgres.listen", factory: { _ in SwiftLogNoOpLogHandler() })
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private var cancelled = false

    private init(configuration: @escaping @Sendable () throws -> PostgresConnection.Configuration, onChange: @escaping @Sendable () -> Void) {
        self.configuration = configuration
        self.onChange = onChange
    }

    static func start(
        location: PostgresLocation, configuration: @escaping @Sendable () throws -> PostgresConnection.Configuration,
        onChange: @escaping @Sendable () -> Void
    ) -> PostgresChangeListener {
        let listener = PostgresChangeListener(configuration: configuration, onChange: onChange)
        listener.connect()
        return listener
    }

    func cancel() {
        let open = lock.withLock { () -> PostgresConnection? in
            cancelled = true
            defer { connection = nil }
            return connection
        }
        if let open { open.close().whenComplete { _ in _ = open } }
    }

    private func connect() {
        guard !lock.withLock({ cancelled }) else { return }
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try self.configuration()
        } catch {
            return
        }
        PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 0, logger: logger)
            .flatMap { connection -> EventLoopFuture<PostgresConnection> in
                connection.addListener(channel: Self.channel) { [weak self] _, _ in self?.onChange() }
                return connection.query(PostgresQuery(unsafeSQL: "LISTEN \(Self.channel)"), logger: self.logger).map { _ in connection }
                    .flatMapError { error in connection.close().flatMapThrowing { throw error } }
            }
            .whenComplete { [weak self] result in
                guard let self else {
                    if case .success(let connection) = result { connection.close().whenComplete { _ in _ = connection } }
                    return
                }
                switch result {
                case .success(let connection):
                    let keep = self.lock.withLock { () -> Bool in
                        guard !self.cancelled else { return false }
                        self.connection = connection
                        return true
                    }
                    guard keep else {
                        connection.close().whenComplete { _ in _ = connection }
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

    private func reconnectLater() {
        lock.withLock { connection = nil }
        eventLoop.scheduleTask(in: Self.reconnectDelay) { [weak self] in self?.connect() }
    }
}
