import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// Serves a ``Witness`` over HTTP/1.1 on SwiftNIO: `POST /add-checkpoint`, and `GET /` or `/healthz` for health checks.
///
/// Requests carry no secrets and answers are signatures anyone may see, so the listener speaks plain HTTP; put it
/// behind a TLS-terminating proxy to offer https. Hostile input is bounded: bodies above
/// ``Witness/maximumRequestBytes`` are refused with 413 before they are read, each request must arrive whole within
/// ``Limits/requestTimeout`` (a trickle does not extend it), idle keep-alive connections close after
/// ``Limits/idleTimeout``, and at most ``Limits/maximumConnections`` are open at once, at most
/// ``Limits/maximumConnectionsPerAddress`` from one address. SQLite work runs on a small
/// thread pool, never on the event loop.
public final class WitnessServer: Sendable {
    public struct Limits: Sendable {
        /// Connections open at once; more are closed as they arrive.
        public var maximumConnections: Int
        /// Connections open at once from one client address, so that one host cannot take every slot.
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
    private let connections = NIOLockedValueBox(WitnessConnectionCount())

    /// - Parameter port: 0 binds a free port; ``start()`` returns the one bound.
    public init(witness: Witness, host: String, port: Int, limits: Limits = Limits(), logger: Logger = Logger(label: "pinset.witness")) {
        self.witness = witness
        self.host = host
        self.requestedPort = port
        self.limits = limits
        self.logger = logger
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
                guard connections.withLockedValue({ $0.admit(address, limits: limits) }) else { return channel.close() }
                channel.closeFuture.whenComplete { _ in connections.withLockedValue { $0.remove(address) } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        WitnessHTTPHandler(witness: witness, threadPool: threadPool, limits: limits))
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

/// The connections open now, in all and per client address.
struct WitnessConnectionCount: Sendable {
    private(set) var total = 0
    private(set) var byAddress: [String: Int] = [:]

    /// Counts a new connection from `address`, or returns false when a limit is reached.
    mutating func admit(_ address: String, limits: WitnessServer.Limits) -> Bool {
        guard total < limits.maximumConnections, byAddress[address, default: 0] < limits.maximumConnectionsPerAddress else {
            return false
        }
        total += 1
        byAddress[address, default: 0] += 1
        return true
    }

    mutating func remove(_ address: String) {
        total -= 1
        let remaining = byAddress[address, default: 1] - 1
        byAddress[address] = remaining > 0 ? remaining : nil
    }
}
