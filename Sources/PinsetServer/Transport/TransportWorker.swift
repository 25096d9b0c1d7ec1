import Dispatch
import PinsetHTTP

/// A serial queue and the connections confined to it.
///
/// Thread-safety: `@unchecked Sendable` because its mutable members (`connections`, `timer`, `draining`) and the
/// shared read buffer are used only on `queue`; callers from elsewhere go through ``perform(_:)`` or
/// `queue.async`. One repeating timer per worker applies every connection's deadlines, so requests never create
/// or reschedule timers.
final class TransportWorker: @unchecked Sendable {
    let queue: DispatchQueue
    let handler: any HTTPRequestHandler
    let onRequest: @Sendable (AccessLogEntry) -> Void
    let machineConfiguration: HTTPConnectionStateMachine.Configuration
    let lingerTimeout: Duration
    /// Receive buffer shared by the connections of this worker; valid because they run one at a time on `queue`.
    let readBuffer: UnsafeMutableRawBufferPointer
    let admission: ConnectionAdmission
    let onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?
    let proxyProtocol: Bool
    private let counter: ConnectionCounter
    private var connections: [ObjectIdentifier: TransportConnection] = [:]
    private var timer: (any DispatchSourceTimer)?
    private var draining = false

    init(index: Int, configuration: SocketServerConfiguration, handler: any HTTPRequestHandler,
         onRequest: @escaping @Sendable (AccessLogEntry) -> Void, counter: ConnectionCounter,
         admission: ConnectionAdmission, onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?) {
        self.onLimit = onLimit
        self.proxyProtocol = configuration.proxyProtocol
        self.queue = DispatchQueue(label: "pinset.http.worker.\(index)", qos: .userInitiated)
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
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Starts the deadline timer, ticking at a tenth of the shortest timeout (10 ms ... 500 ms).
    func start() {
        let shortest = min(machineConfiguration.requestHeadTimeout, machineConfiguration.idleTimeout, lingerTimeout)
        let tick = min(max(shortest / 10, .milliseconds(10)), .milliseconds(500))
        let nanoseconds = Int(tick.nanoseconds)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                       leeway: .nanoseconds(nanoseconds / 10))
        timer.setEventHandler { self.applyDeadlines() }
        self.timer = timer
        timer.resume()
    }

    /// Runs `body` on `queue` and returns when it has run.
    func perform(_ body: @escaping @Sendable (TransportWorker) -> Void) async {
        await withCheckedContinuation { continuation in
            queue.async {
                body(self)
                continuation.resume()
            }
        }
    }

    /// Takes ownership of a connection the listener accepted, counted and created for this worker. Must run on
    /// `queue`.
    func adopt(_ connection: TransportConnection) {
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
        if draining { connection.beginDraining() }
    }

    /// Called by a connection once its descriptor is closed. Must run on `queue`.
    func connectionDidClose(_ connection: TransportConnection) {
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        if let admitted = connection.admittedAddress { admission.release(address: admitted) }
        counter.decrement()
    }

    /// Starts graceful shutdown of every connection. Must run on `queue`.
    func beginDraining() {
        draining = true
        for connection in connections.values { connection.beginDraining() }
    }

    /// Closes every connection at once. Must run on `queue`.
    func closeAll() {
        for connection in connections.values { connection.closeNow() }
    }

    /// Cancels the deadline timer. Must run on `queue`.
    func stop() {
        timer?.cancel()
        timer = nil
    }

    private func applyDeadlines() {
        let now = HTTPTime.now()
        for connection in connections.values { connection.checkTimeouts(now: now) }
    }
}
