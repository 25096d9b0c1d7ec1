#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetCore
import PinsetConnectionSlots
import PinsetHTTP
import PinsetLiveCheck

/// The token of the listening socket in every worker's loop (a generic type cannot hold a static constant).
enum TransportListenerToken {
    static let value = UInt64.max - 1
}

/// The listening socket, watched by every worker's event loop: the loop that is woken accepts and keeps the
/// connections itself, so a connection never crosses threads and an idle loop takes the next ones.
///
/// On epoll, `EPOLLEXCLUSIVE` wakes one waiting loop per new connection rather than all of them; a loop busy with
/// its own connections is not waiting and so is not woken, which spreads new connections to the idle ones. Dispatch
/// wakes every loop's source, and the loops that find nothing left to accept get `EAGAIN`.
///
/// Generic over the readiness loop (see ``ReadinessLoop``).
///
/// Thread-safety: the descriptor is only read by the loops; the spare descriptor is behind a lock; `stop` has every
/// loop let go of the socket before closing it.
///
/// Hostile load: it keeps accepting even when `maxConnections` are open, so the kernel backlog never fills and
/// clients get a fast answer. A connection from an address that already has `maxConnectionsPerAddress` open is
/// refused. When the server is full, the oldest connection that has not yet sent a complete request head is
/// evicted (closed silently) and the new one takes its slot; when there is none, one of the accepting loop's
/// connections that is idle between keep-alive requests; only when none of those is there either is the new one
/// refused. Behind the PROXY protocol with trusted proxies, a connection from any other peer is closed at once. A refused connection receives a canned `503` (sent non-blocking, no `Date`,
/// `Connection: close`) and is closed immediately. When the process runs out of descriptors (`EMFILE`) a
/// reserved spare descriptor is released to accept and close one pending connection, instead of letting the
/// listener spin on a queue it cannot drain. When there is no spare to give up (another thread took the number
/// between its release and its reopening, and none has been free since), the loop stops watching the listener for
/// ``acceptPause`` and tries again then, as nginx does, rather than being woken by the same full queue at once.
final class TransportListener<Loop: ReadinessLoop>: Sendable {
    private let fd: Int32
    private let workers: [TransportWorker<Loop>]
    private let counter: ConnectionCounter
    private let maxConnections: Int
    private let admission: ConnectionAdmission<Loop>
    private let proxyProtocol: Bool
    /// The peers whose PROXY header is believed; nil: any.
    private let trustedProxies: [IPAddressRange]?
    private let onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?
    private let overloadResponse = HTTPResponseEncoder.cannedResponse(.error(.serviceUnavailable))
    /// A descriptor kept open to be given up when the process runs out of them (see `shedOneConnection`).
    private let spareFD = LockedValue<Int32>(-1)

    /// At most this many connections are accepted per readiness event, so one burst cannot starve `stop`.
    private static var acceptBatch: Int { 64 }
    /// How long a loop stops accepting, at least, when the process is out of descriptors and has none to shed with
    /// (it watches the listener again at the first tick after).
    static var acceptPause: Duration { .milliseconds(100) }

    init(fd: Int32, workers: [TransportWorker<Loop>], counter: ConnectionCounter, maxConnections: Int,
         admission: ConnectionAdmission<Loop>, proxyProtocol: Bool, trustedProxies: [IPAddressRange]?,
         onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?) {
        self.proxyProtocol = proxyProtocol
        self.trustedProxies = trustedProxies
        precondition(!workers.isEmpty, "a listener needs at least one worker")
        self.fd = fd
        self.workers = workers
        self.counter = counter
        self.maxConnections = maxConnections
        self.admission = admission
        self.onLimit = onLimit
    }

    /// Has every worker's loop watch the listening socket.
    func start() {
        spareFD.withLock { $0 = Self.openSpare() }
        for worker in workers {
            worker.execute { [self] worker in
                worker.listener = self
                watch(on: worker)
            }
        }
    }

    /// Has `worker`'s loop watch the listening socket; false when the loop could not (it is out of memory too).
    /// Loop thread only.
    @discardableResult
    func watch(on worker: TransportWorker<Loop>) -> Bool {
        worker.loop.register(fd, token: TransportListenerToken.value, events: Loop.readable | Loop.exclusiveWakeUp)
    }

    /// Has `worker`'s loop stop watching the listening socket until it calls ``watch(on:)`` again. Loop thread only.
    func unwatch(on worker: TransportWorker<Loop>) {
        worker.loop.remove(fd)
    }

    /// Stops accepting; returns once the listening descriptor is closed, so new connections are refused.
    func stop() async {
        for worker in workers {
            await withCheckedContinuation { (released: CheckedContinuation<Void, Never>) in
                worker.execute { [fd] worker in
                    worker.listener = nil
                    worker.loop.release(fd) { released.resume() }
                }
            }
        }
        close(fd)
        spareFD.withLock { spare in
            if spare >= 0 { close(spare) }
            spare = -1
        }
    }

    /// Accepts what is pending, for `worker`'s loop, which keeps the connections. Called on that loop's thread.
    func acceptConnections(on worker: TransportWorker<Loop>) {
        takeSpareIfLost()
        for _ in 0..<Self.acceptBatch {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    TransportSocket.accept(fd, $0, &length)
                }
            }
            guard client >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE:
                    if !shedOneConnection() {
                        onLimit?(.acceptPaused)
                        worker.pauseAccepting(for: Self.acceptPause)
                    }
                default: break
                }
                return
            }
            TransportSocket.setNoDelay(client)
            let remoteAddress = TransportSocket.describeAddress(storage)
            if let trustedProxies, !Self.isTrusted(remoteAddress, by: trustedProxies) {
                // Not a balancer: whatever it would write in a PROXY header is not believed, and nothing is answered.
                onLimit?(.untrustedProxy)
                close(client)
                continue
            }
            // Behind the PROXY protocol the socket's address is the balancer's; the connection applies the
            // per-address limit to the client address once the header has arrived. An IPv6 client counts by its
            // /64, which one subscriber usually holds whole.
            let admitted: String? = proxyProtocol ? nil : ClientAddress.key(for: remoteAddress)
            if let admitted, !admission.admit(address: admitted) {
                onLimit?(.refusedPerAddress)
                refuse(client)
                continue
            }
            guard counter.tryIncrement(limit: maxConnections) || evictOneForANewConnection() || takeAnIdleSlot(on: worker) else {
                if let admitted { admission.release(address: admitted) }
                onLimit?(.refusedServerFull)
                refuse(client)
                continue
            }
            let connection = TransportConnection(fd: client, remoteAddress: remoteAddress, admittedAddress: admitted,
                                                 worker: worker, now: .now())
            worker.adopt(connection)
        }
    }

    /// Closes one of `worker`'s idle keep-alive connections and counts the new connection in its slot, freed on this
    /// thread (another loop taking a slot at the same moment can put the count one over, as an eviction in flight does).
    private func takeAnIdleSlot(on worker: TransportWorker<Loop>) -> Bool {
        guard worker.closeOneIdleConnection() else { return false }
        counter.forceIncrement()
        return true
    }

    /// Whether `address` (an IPv4-mapped one as its IPv4 address) is in one of `ranges`.
    static func isTrusted(_ address: String, by ranges: [IPAddressRange]) -> Bool {
        guard let parsed = IPAddress(address) else { return false }
        let candidate = parsed.mappedIPv4 ?? parsed
        return ranges.contains { $0.contains(candidate) }
    }

    /// Closes the oldest connection still waiting for its first request head and hands its slot to the new
    /// connection: the count is raised now and lowered when the evicted one has closed, so the server exceeds
    /// `maxConnections` only by evictions still in flight on the workers' loops. (One whose head arrived meanwhile
    /// closes after its answer instead: see ``TransportConnection/evict()``.) Only when there is none does a
    /// connection idle between keep-alive requests give way, on this loop, at once.
    private func evictOneForANewConnection() -> Bool {
        guard let victim = admission.takeOldestPending() else { return false }
        counter.forceIncrement()
        victim.worker.execute { _ in victim.evict() }
        onLimit?(.evicted)
        return true
    }

    /// Sends the canned 503 without blocking, discards whatever request bytes already arrived and closes.
    private func refuse(_ client: Int32) {
        TransportSocket.sendRefusal(client, response: overloadResponse)
        close(client)
    }

    /// Takes the spare again, before accepting, if it was lost: another thread took the number it gave up (another
    /// worker's accept, as on the Dispatch transport every worker wakes at once, or a file opened anywhere in the
    /// process). During a flood every descriptor that frees up would otherwise go to the next pending connection,
    /// leaving nothing to shed with until the flood ends; after a loss, the first one freed becomes the spare
    /// instead. Costs one briefly held lock per readiness event (on Dispatch, every woken worker takes it).
    private func takeSpareIfLost() {
        spareFD.withLock { spare in
            if spare < 0 { spare = Self.openSpare() }
        }
    }

    /// A descriptor that costs nothing to hold: kept only for its number.
    private static func openSpare() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    /// Gives up the spare descriptor to accept and close one pending connection, then takes a spare again; false
    /// when there was none and none could be taken now.
    private func shedOneConnection() -> Bool {
        let (hadSpare, shed) = spareFD.withLock { spare -> (Bool, Bool) in
            if spare < 0 { spare = Self.openSpare() }
            guard spare >= 0 else { return (false, false) }
            close(spare)
            let client = accept(fd, nil, nil)
            if client >= 0 { close(client) }
            spare = Self.openSpare()
            return (true, client >= 0)
        }
        if shed { onLimit?(.shedForDescriptors) }
        return hadSpare
    }
}
