import Foundation
import PinsetCore
import PinsetHTTP

/// A small, strict HTTP/1.1 server on non-blocking POSIX sockets: one event loop per worker accepts connections and
/// serves them — a thread in `epoll_wait` on Linux, or a Dispatch queue with read and write sources
/// (``SocketServerConfiguration/transport``; Dispatch is the only one on Darwin).
///
/// Serves GET and HEAD through an ``HTTPRequestHandler`` with keep-alive and pipelining, and POST with
/// `Content-Length` content only when ``SocketServerConfiguration/limits`` allow content; refuses everything else
/// in the protocol layer (see `HTTPRequestParser`). Connections are spread round robin over
/// ``SocketServerConfiguration/workerQueues`` event loops; the handler and `onRequest` run on their threads.
///
/// ```swift
/// let server = SocketServer(configuration: .init(port: 8080), handler: routes, onRequest: { log($0) })
/// let port = try server.start()
/// // on SIGTERM / SIGINT:
/// await server.shutdown(gracePeriod: .seconds(10))
/// ```
///
/// Thread-safety: its only mutable member, `state`, is reachable only under its lock; all
/// socket work happens on the workers' own loop threads. A server starts once; call
/// ``shutdown(gracePeriod:)`` before releasing it, or its sockets and loop threads stay alive.
public final class SocketServer: Sendable {
    private enum State {
        case idle
        case running(any RunningTransport, port: UInt16)
        case stopped
    }

    public let configuration: SocketServerConfiguration
    private let handler: any HTTPRequestHandler
    private let onRequest: @Sendable (AccessLogEntry) -> Void
    private let accessLog: AccessLog?
    private let counter: ConnectionCounter
    private let onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?
    private let state = LockedValue(State.idle)

    /// - Parameters:
    ///   - onRequest: called for every response, including protocol errors, on the loop thread that sent it.
    ///   - accessLog: where every response is logged, a line each, written in blocks per loop thread.
    ///   - onConnectionCountChange: called with the number of open connections after changes, on a private serial
    ///     queue; bursts of changes are coalesced into one call with the count as it then is.
    ///   - onConnectionLimit: called for each connection refused by a limit and each eviction, on the loop thread
    ///     that accepted it; it must be quick.
    public init(
        configuration: SocketServerConfiguration = SocketServerConfiguration(),
        handler: any HTTPRequestHandler,
        onRequest: @escaping @Sendable (AccessLogEntry) -> Void = { _ in },
        accessLog: AccessLog? = nil,
        onConnectionCountChange: (@Sendable (Int) -> Void)? = nil,
        onConnectionLimit: (@Sendable (ConnectionLimitEvent) -> Void)? = nil
    ) {
        precondition(configuration.maxConnections > 0, "maxConnections must be positive")
        precondition(configuration.maxConnectionsPerAddress > 0, "maxConnectionsPerAddress must be positive")
        self.onLimit = onConnectionLimit
        self.configuration = configuration
        self.handler = handler
        self.onRequest = onRequest
        self.accessLog = accessLog
        self.counter = ConnectionCounter(onChange: onConnectionCountChange)
    }

    /// Number of connections currently open (including ones finishing their last response).
    public var openConnections: Int { counter.current }

    /// The bound port while the server runs.
    public var port: UInt16? {
        state.withLock { state in
            if case .running(_, let port) = state { return port }
            return nil
        }
    }

    /// Binds, listens and starts accepting. Returns the bound port (the chosen one when the configured port is 0).
    /// Throws ``SocketServerError`` (e.g. ``SocketServerError/Code/addressInUse``) without side effects.
    @discardableResult
    public func start() throws(SocketServerError) -> UInt16 {
        try state.withLock { (state: inout State) throws(SocketServerError) -> UInt16 in
            guard case .idle = state else { throw SocketServerError(.alreadyStarted, "the server was already started") }
            guard SocketTransport.available.contains(configuration.transport) else {
                throw SocketServerError(.transportUnavailable,
                                        "the \(configuration.transport.rawValue) transport does not exist on this platform")
            }
            let (fd, port) = try TransportSocket.listen(host: configuration.host, port: configuration.port,
                                                        backlog: configuration.backlog)
            let running: any RunningTransport
            switch configuration.transport {
            case .epoll:
                #if os(Linux)
                running = try TransportGroup<EpollLoop>(
                    fd: fd, configuration: configuration, handler: handler, onRequest: onRequest,
                    accessLog: accessLog, counter: counter, onLimit: onLimit)
                #else
                preconditionFailure("epoll is in SocketTransport.available only on Linux")
                #endif
            case .dispatch:
                running = try TransportGroup<DispatchLoop>(
                    fd: fd, configuration: configuration, handler: handler, onRequest: onRequest,
                    accessLog: accessLog, counter: counter, onLimit: onLimit)
            }
            state = .running(running, port: port)
            return port
        }
    }

    /// Graceful shutdown: stops accepting (new connections are refused once this returns from its first step),
    /// lets in-flight responses finish writing, closes idle keep-alive connections, answers a request whose head is
    /// still arriving with `Connection: close`, and after `gracePeriod` closes whatever is left. Returns when every
    /// connection is closed. Cancelling the calling task skips the rest of the grace period. Safe to call more
    /// than once; later calls return at once.
    public func shutdown(gracePeriod: Duration) async {
        let running = state.withLock { state -> (any RunningTransport)? in
            defer { state = .stopped }
            if case .running(let running, _) = state { return running }
            return nil
        }
        guard let running else { return }
        await running.stopAccepting()
        await running.beginDraining()
        await waitForConnectionsToClose(until: .now + gracePeriod)
        if counter.current > 0 {
            await running.closeAll()
            await waitForConnectionsToClose(until: .now + .seconds(5))
        }
        await running.stop()
        await counter.flushNotifications()
    }

    private func waitForConnectionsToClose(until deadline: ContinuousClock.Instant) async {
        while counter.current > 0 && ContinuousClock.now < deadline && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
