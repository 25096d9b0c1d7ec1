import Dispatch
import Glibc
import PinsetHTTP

/// The listening socket: accepts connections and hands them to the workers round robin.
///
/// Thread-safety: `@unchecked Sendable` because its mutable members are used only on its private serial `queue`
/// (the read source's handlers run there, and `stop` hops there).
///
/// Hostile load: it keeps accepting even when `maxConnections` are open, so the kernel backlog never fills and
/// clients get a fast answer. A connection from an address that already has `maxConnectionsPerAddress` open is
/// refused. When the server is full, the oldest connection that has not yet sent a complete request head is
/// evicted (closed silently) and the new one takes its slot; only when every open connection has sent a head is the
/// new one refused. A refused connection receives a canned `503` (sent non-blocking, no `Date`,
/// `Connection: close`) and is closed immediately. When the process runs out of descriptors (`EMFILE`) a
/// reserved spare descriptor is released to accept and close one pending connection, instead of letting the
/// listener spin on a queue it cannot drain.
final class TransportListener: @unchecked Sendable {
    private let fd: Int32
    private let queue = DispatchQueue(label: "pinset.http.listener", qos: .userInitiated)
    private let workers: [TransportWorker]
    private let counter: ConnectionCounter
    private let maxConnections: Int
    private let admission: ConnectionAdmission
    private let proxyProtocol: Bool
    private let onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?
    private let overloadResponse = HTTPResponseEncoder.cannedResponse(.error(.serviceUnavailable))
    private var source: (any DispatchSourceRead)?
    private var nextWorker = 0
    private var spareFD: Int32 = -1
    private var stopped: CheckedContinuation<Void, Never>?

    /// At most this many connections are accepted per readiness event, so one burst cannot starve `stop`.
    private static let acceptBatch = 64

    init(fd: Int32, workers: [TransportWorker], counter: ConnectionCounter, maxConnections: Int,
         admission: ConnectionAdmission, proxyProtocol: Bool, onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?) {
        self.proxyProtocol = proxyProtocol
        precondition(!workers.isEmpty, "a listener needs at least one worker")
        self.fd = fd
        self.workers = workers
        self.counter = counter
        self.maxConnections = maxConnections
        self.admission = admission
        self.onLimit = onLimit
    }

    func start() {
        queue.sync {
            spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { self.acceptConnections() }
            source.setCancelHandler { self.sourceCancelled() }
            self.source = source
            source.resume()
        }
    }

    /// Stops accepting; returns once the listening descriptor is closed, so new connections are refused.
    func stop() async {
        await withCheckedContinuation { continuation in
            queue.async {
                guard let source = self.source else { return continuation.resume() }
                self.stopped = continuation
                source.cancel()
            }
        }
    }

    private func sourceCancelled() {
        close(fd)
        if spareFD >= 0 { close(spareFD) }
        spareFD = -1
        source = nil
        stopped?.resume()
        stopped = nil
    }

    private func acceptConnections() {
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
                case EMFILE, ENFILE: shedOneConnection()
                default: break
                }
                return
            }
            TransportSocket.setNoDelay(client)
            let remoteAddress = TransportSocket.describeAddress(storage)
            // Behind the PROXY protocol the socket's address is the balancer's; the connection applies the
            // per-address limit to the client address once the header has arrived.
            let admitted: String? = proxyProtocol ? nil : remoteAddress
            if let admitted, !admission.admit(address: admitted) {
                onLimit?(.refusedPerAddress)
                refuse(client)
                continue
            }
            guard counter.tryIncrement(limit: maxConnections) || evictOneForANewConnection() else {
                if let admitted { admission.release(address: admitted) }
                onLimit?(.refusedServerFull)
                refuse(client)
                continue
            }
            let worker = workers[nextWorker]
            nextWorker = (nextWorker + 1) % workers.count
            let connection = TransportConnection(fd: client, remoteAddress: remoteAddress, admittedAddress: admitted,
                                                 worker: worker, now: .now())
            worker.queue.async { worker.adopt(connection) }
        }
    }

    /// Closes the oldest connection still waiting for its first request head and hands its slot to the new
    /// connection: the count is raised now and lowered when the evicted one has closed, so the server exceeds
    /// `maxConnections` only by evictions still in flight on the workers' queues.
    private func evictOneForANewConnection() -> Bool {
        guard let victim = admission.takeOldestPending() else { return false }
        counter.forceIncrement()
        victim.worker.queue.async { victim.evict() }
        onLimit?(.evicted)
        return true
    }

    /// Sends the canned 503 without blocking, discards whatever request bytes already arrived and closes.
    private func refuse(_ client: Int32) {
        Self.sendRefusal(client, response: overloadResponse)
        close(client)
    }

    /// Sends `response` without blocking and discards the request bytes already received; the caller closes.
    static func sendRefusal(_ client: Int32, response: [UInt8]) {
        _ = response.withUnsafeBytes {
            send(client, $0.baseAddress, $0.count, TransportSocket.sendFlags | Int32(MSG_DONTWAIT))
        }
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { scratch in
            _ = recv(client, scratch.baseAddress, scratch.count, Int32(MSG_DONTWAIT))
        }
    }

    private func shedOneConnection() {
        guard spareFD >= 0 else { return }
        close(spareFD)
        let client = accept(fd, nil, nil)
        if client >= 0 { close(client) }
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
