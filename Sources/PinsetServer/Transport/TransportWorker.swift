import PinsetHTTP

/// An event loop (one thread in `epoll_wait`, or one Dispatch queue) and the connections confined to it.
///
/// Thread-safety: `@unchecked Sendable` because its mutable members (`connections`, `nextToken`, `draining`) and
/// the shared read buffer are used only on the loop's thread; callers from elsewhere go through ``perform(_:)`` or
/// ``execute(_:)``. The loop's tick applies every connection's deadlines, so requests never create or reschedule
/// timers.
final class TransportWorker<Loop: ReadinessLoop>: @unchecked Sendable {
    let handler: any HTTPRequestHandler
    let onRequest: @Sendable (AccessLogEntry) -> Void
    /// This loop's access-log lines, written in blocks; nil with the access log off.
    private let accessLog: AccessLogBuffer?
    let machineConfiguration: HTTPConnectionStateMachine.Configuration
    let lingerTimeout: Duration
    /// Receive buffer shared by the connections of this worker; valid because they run one at a time on the loop.
    let readBuffer: UnsafeMutableRawBufferPointer
    let admission: ConnectionAdmission<Loop>
    let onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?
    let proxyProtocol: Bool
    private let counter: ConnectionCounter
    private var connections: [UInt64: TransportConnection<Loop>] = [:]
    private var nextToken: UInt64 = 0
    private var draining = false
    /// The listening socket this loop accepts from, while the server accepts. Loop thread only.
    var listener: TransportListener<Loop>?
    /// Until when this loop does not watch the listener (the process was out of descriptors); loop thread only.
    private var acceptPausedUntil: ContinuousClock.Instant?
    /// Set once in `init`; the loop calls back into this worker.
    private var eventLoop: Loop!

    init(index: Int, configuration: SocketServerConfiguration, handler: any HTTPRequestHandler,
         onRequest: @escaping @Sendable (AccessLogEntry) -> Void, accessLog: AccessLog?, counter: ConnectionCounter,
         admission: ConnectionAdmission<Loop>, onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?) throws(SocketServerError) {
        self.onLimit = onLimit
        self.accessLog = accessLog?.makeBuffer()
        self.proxyProtocol = configuration.proxyProtocol
        self.handler = handler
        self.onRequest = onRequest
        self.counter = counter
        self.admission = admission
        self.lingerTimeout = configuration.lingerTimeout
        self.machineConfiguration = HTTPConnectionStateMachine.Configuration(
            limits: configuration.limits,
            requestHeadTimeout: configuration.requestHeadTimeout,
            idleTimeout: configuration.idleTimeout
        )
        self.readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        // A tenth of the shortest timeout (10 ms ... 500 ms).
        let shortest = min(machineConfiguration.requestHeadTimeout, machineConfiguration.idleTimeout, lingerTimeout)
        let tick = min(max(shortest / 10, .milliseconds(10)), .milliseconds(500))
        eventLoop = try Loop(
            name: "pinset-http-\(index)", tick: tick,
            // Strong: the loop releases both when it ends (`stop`), and the worker must outlive its last event.
            onEvent: { [self] token, events in
                if token == TransportListenerToken.value {
                    listener?.acceptConnections(on: self)
                } else {
                    connections[token]?.handle(events: events)
                }
            },
            onTick: { [self] in applyDeadlines() }
        )
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Starts the loop's thread.
    func start() {
        eventLoop.start()
    }

    /// Runs `body` on the loop's thread, from any thread.
    func execute(_ body: @escaping @Sendable (TransportWorker) -> Void) {
        eventLoop.execute { body(self) }
    }

    /// Runs `body` on the loop's thread and returns when it has run.
    func perform(_ body: @escaping @Sendable (TransportWorker) -> Void) async {
        await withCheckedContinuation { continuation in
            execute { worker in
                body(worker)
                continuation.resume()
            }
        }
    }

    /// The loop the connections of this worker register their sockets with.
    var loop: Loop { eventLoop }

    /// Takes ownership of a connection the listener accepted, counted and created for this worker. Loop thread only.
    func adopt(_ connection: TransportConnection<Loop>) {
        let token = nextToken
        nextToken += 1
        connections[token] = connection
        connection.start(token: token)
        if draining { connection.beginDraining() }
    }

    /// Called by a connection once its descriptor is closed. Loop thread only.
    func connectionDidClose(_ connection: TransportConnection<Loop>, token: UInt64) {
        guard connections.removeValue(forKey: token) != nil else { return }
        if let admitted = connection.admittedAddress { admission.release(address: admitted) }
        counter.decrement()
    }

    /// Closes one connection that waits between keep-alive requests, to give its slot to a new connection when the
    /// server is full and none is waiting for its first head; false when this loop has none. Loop thread only: the
    /// listener accepts on this loop, so the slot is free before it counts the new connection.
    ///
    /// The one idle the longest goes, as nginx reuses its connections, and only after a second without traffic and
    /// with nothing unread on its socket, so that a client whose next request is already on its way is not cut off.
    /// A scan of this loop's connections, made only when the server is full.
    func closeOneIdleConnection() -> Bool {
        let settled = ContinuousClock.now - Self.idleBeforeGivingWay
        let candidates = connections.values.filter { $0.isIdleBetweenRequests && $0.idleSince <= settled }
            .sorted { $0.idleSince < $1.idleSince }
        guard let victim = candidates.first(where: { !$0.hasUnreadInput }) else { return false }
        victim.closeNow()
        onLimit?(.idleClosed)
        return true
    }

    /// How long a keep-alive connection must have been idle before a full server closes it for a new one.
    static var idleBeforeGivingWay: Duration { .seconds(1) }

    /// Starts graceful shutdown of every connection. Loop thread only.
    func beginDraining() {
        draining = true
        for connection in connections.values { connection.beginDraining() }
    }

    /// Closes every connection at once. Loop thread only.
    func closeAll() {
        for connection in connections.values { connection.closeNow() }
    }

    /// Ends the loop; its thread exits once the current events and tasks have run. Loop thread only. The access-log
    /// lines still waiting are written first: every request answered before the stop is in the log.
    func stop() {
        accessLog?.flush()
        eventLoop.stop()
    }

    /// One answered request: counted (metrics) and logged. Loop thread only.
    func record(_ entry: AccessLogEntry) {
        onRequest(entry)
        accessLog?.append(entry)
    }

    private func applyDeadlines() {
        let now = HTTPTime.now()
        for connection in connections.values { connection.checkTimeouts(now: now) }
        accessLog?.flushIfDue(now: now.instant)
        if let until = acceptPausedUntil, ContinuousClock.now >= until {
            acceptPausedUntil = nil
            // A loop that cannot watch it again now tries at the next tick, rather than never accepting again.
            if let listener, !listener.watch(on: self) { acceptPausedUntil = .now }
        }
    }

    /// Stops watching the listener for `duration`; the tick watches it again. Loop thread only.
    func pauseAccepting(for duration: Duration) {
        guard acceptPausedUntil == nil, let listener else { return }
        listener.unwatch(on: self)
        acceptPausedUntil = .now + duration
    }
}
