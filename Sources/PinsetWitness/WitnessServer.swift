import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import PinsetConnectionSlots

/// Serves a ``Witness`` over HTTP/1.1 on SwiftNIO: `POST /add-checkpoint`, and `GET /` or `/healthz` for health checks.
///
/// Requests carry no secrets and answers are signatures anyone may see, so the listener speaks plain HTTP; put it
/// behind a TLS-terminating proxy to offer https. Hostile input is bounded: bodies above
/// ``Witness/maximumRequestBytes`` are refused with 413 before they are read, each request must arrive whole within
/// ``Limits/requestTimeout`` (a trickle does not extend it), idle keep-alive connections close after
/// ``Limits/idleTimeout``, and at most ``Limits/maximumConnections`` are open at once, at most
/// ``Limits/maximumConnectionsPerAddress`` from one address (an IPv6 /64 counting as one). When a limit is reached a
/// new connection takes the place of one that is idle or has sent no request yet (``ConnectionSlots``), so idle
/// connections cannot keep a log's submission out; only connections busy with a request keep their slot. SQLite
/// work runs on a small thread pool, never on the event loop.
public final class WitnessServer: Sendable {
    public struct Limits: Sendable {
        /// Connections open at once; beyond it a new one replaces an idle one, or is closed when none is idle.
        public var maximumConnections: Int
        /// Connections open at once from one client address (an IPv6 /64), so that one host cannot take every slot.
        public var maximumConnectionsPerAddress: Int
        /// Time from a request's first byte to its last.
        public var requestTimeout: TimeAmount
        /// Time a keep-alive connection may wait for its next request.
        public var idleTimeout: TimeAmount

        public init(
            maximumConnections: Int = 256, maximumConnectionsPerAddress: Int = 32, requestTimeout: TimeAmount = .seconds(10),
            idleTimeout: TimeAmount = .seconds(60)
        ) {
            self.maximumConnections = maximumConnections
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
        }
    }

    private let witness: Witness
    private let host: String
    private let requestedPort: Int
    private let limits: Limits
    private let logger: Logger
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let threadPool = NIOThreadPool(numberOfThreads: 2)
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)
    private let connections: ConnectionSlotTable

    /// - Parameter port: 0 binds a free port; ``start()`` returns the one bound.
    public init(witness: Witness, host: String, port: Int, limits: Limits = Limits(), logger: Logger = Logger(label: "pinset.witness")) {
        self.witness = witness
        self.host = host
        self.requestedPort = port
        self.limits = limits
        self.logger = logger
        connections = ConnectionSlotTable(
            limits: ConnectionSlots.Limits(
                total: limits.maximumConnections, perAddress: limits.maximumConnectionsPerAddress, reservedForProtected: 0,
                protectedPerHolder: limits.maximumConnections),
            logger: logger, listenerName: "Witness listener", protectedPhaseName: "is receiving a request or waiting for its answer")
    }

    /// Binds and starts accepting; returns the bound port.
    @discardableResult
    public func start() async throws -> Int {
        threadPool.start()
        let witness = self.witness
        let threadPool = self.threadPool
        let limits = self.limits
        let connections = self.connections
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let address = channel.remoteAddress?.ipAddress ?? "unknown"
                guard let connection = connections.admit(channel, address: address) else { return channel.close() }
                channel.closeFuture.whenComplete { _ in connections.remove(connection) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        WitnessHTTPHandler(witness: witness, threadPool: threadPool, limits: limits) { isIdle in
                            // Only a request being received or answered keeps its slot against a new connection.
                            connections.enter(isIdle ? .idle : .protectedRequest, id: connection)
                        })
                }
            }
            .childChannelOption(.socketOption(.so_keepalive), value: 1)
        let bound: any Channel
        do {
            bound = try await bootstrap.bind(host: host, port: requestedPort).get()
        } catch {
            try? await threadPool.shutdownGracefully()
            throw WitnessConfigurationError("Cannot listen on \(host):\(requestedPort): \(error). Choose a free port, or an address of this machine.")
        }
        channel.withLockedValue { $0 = bound }
        let port = bound.localAddress?.port ?? requestedPort
        logger.info("Witness listening", metadata: ["address": "\(host):\(port)", "name": "\(witness.cosigner.keyName)"])
        return port
    }

    /// The bound port, once started.
    public var port: Int? { channel.withLockedValue { $0?.localAddress?.port } }

    /// Stops accepting, closes the listener, then stops the event loop and the thread pool.
    public func shutdown() async {
        let bound = channel.withLockedValue { $0 }
        try? await bound?.close()
        try? await group.shutdownGracefully()
        try? await threadPool.shutdownGracefully()
    }
}
