#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PinsetConnectionSlots
import PinsetHTTP

/// One accepted socket, driving an ``HTTPConnectionStateMachine`` from its worker's event loop.
///
/// Thread-safety: `@unchecked Sendable` because every member is touched only on the worker's loop thread: the
/// loop delivers the socket's readiness there (``handle(events:)``), and the worker calls `beginDraining`,
/// `checkTimeouts` and `closeNow` there too.
///
/// I/O model: a read event does one `recv` into the worker's shared buffer; complete requests are answered in
/// order and all queued output is written with one `send`/`sendmsg` that cannot raise `SIGPIPE`. When the kernel
/// buffer is full (`EAGAIN`) the connection waits for writability instead of input until the output drains, so a
/// client that does not read cannot make the server buffer more than one batch of responses. After its last
/// response the connection half-closes (`shutdown(SHUT_WR)`) and discards input until the peer closes or
/// `lingerTimeout` passes, so unread input cannot turn the close into a reset that destroys the response in flight.
///
/// Lifecycle: `closeNow` hands the descriptor to the loop to close (at once on epoll; on Dispatch once its sources
/// are cancelled) and has the worker forget the connection at once.
///
/// Generic over the readiness loop, so that the epoll path calls its loop directly.
final class TransportConnection<Loop: ReadinessLoop>: @unchecked Sendable {
    private let fd: Int32
    let worker: TransportWorker<Loop>
    /// The client's address: the socket's, or the PROXY header's once it has arrived.
    private(set) var remoteAddress: String
    /// The address counted in the per-address limit, released when the connection closes; nil until counted.
    private(set) var admittedAddress: String?
    /// Bytes of a PROXY protocol header still arriving; nil when none is expected (any more).
    private var proxyHeaderBytes: [UInt8]?
    /// Admission number while no complete request head has arrived (an eviction candidate), then nil.
    private var pendingNumber: UInt64?
    private var machine: HTTPConnectionStateMachine
    /// The worker's name for this connection in its loop; set by `start`.
    private var token: UInt64 = 0
    private var wantsInput = true
    private var wantsWritability = false
    /// What the loop watches the socket for now; nil while it is not registered (nothing wanted).
    private var registeredEvents: UInt32?
    private var sawEndOfInput = false
    private var lingerDeadline: ContinuousClock.Instant?
    private var isClosed = false

    /// Created by the listener at accept, which registers it as an eviction candidate at once (a burst of accepts
    /// may run ahead of the workers adopting them); everything after that happens on the worker's loop thread.
    init(fd: Int32, remoteAddress: String, admittedAddress: String?, worker: TransportWorker<Loop>, now: HTTPTime) {
        self.fd = fd
        self.worker = worker
        self.remoteAddress = remoteAddress
        self.admittedAddress = admittedAddress
        self.proxyHeaderBytes = worker.proxyProtocol ? [] : nil
        self.machine = HTTPConnectionStateMachine(configuration: worker.machineConfiguration, now: now)
        self.pendingNumber = worker.admission.registerPending(self)
    }

    /// Starts reading: at once, since a client usually sends its request right behind its connection (and
    /// always does with `Connection: close`), so the socket is registered with the loop only when the request
    /// has not arrived yet. The worker keeps the connection until it closes.
    func start(token: UInt64) {
        self.token = token
        readable()
        updateInterest()
    }

    /// The socket's readiness, from the loop.
    func handle(events: UInt32) {
        if events & Loop.writable != 0 && wantsWritability { writable() }
        if events & (Loop.readable | Loop.hangUp) != 0 && wantsInput { readable() }
        // An error or hang-up with neither wanted: nothing more can happen on this socket.
        if events & Loop.hangUp != 0 && !wantsInput && !wantsWritability && lingerDeadline == nil { closeNow() }
    }

    /// Closes a connection chosen by the listener to make room. One whose complete head arrived meanwhile (the
    /// listener chose it on another thread) is answered first and then closed, so that the slot handed to the new
    /// connection is still given back.
    func evict() {
        guard !isClosed else { return }
        guard pendingNumber != nil else { return beginDraining() }
        pendingNumber = nil
        closeNow()
    }

    /// Whether the connection waits between keep-alive requests with nothing in progress: a slot a new connection
    /// may take when the server is full, as nginx reuses its idle keep-alive connections. A client that holds
    /// connections open with one cheap request a minute then cannot keep the server full.
    var isIdleBetweenRequests: Bool {
        !isClosed && pendingNumber == nil && proxyHeaderBytes == nil && lingerDeadline == nil && wantsInput
            && !machine.isClosing && machine.isIdle
    }

    /// Since when nothing has arrived or left.
    var idleSince: ContinuousClock.Instant { machine.lastProgressAt }

    /// Whether bytes the loop has not read yet wait on the socket: the client's next request may be under way. A
    /// socket the peer has closed or reset has none.
    var hasUnreadInput: Bool { TransportSocket.pendingInput(fd) == .bytes }

    /// Stops taking new requests: an idle connection closes now, a busy one after its current response.
    func beginDraining() {
        guard !isClosed, lingerDeadline == nil else { return }
        machine.beginDraining()
        if machine.isClosing && machine.output.isEmpty { beginLingeringClose() }
    }

    /// Applies the request-head, idle and linger deadlines.
    func checkTimeouts(now: HTTPTime) {
        guard !isClosed else { return }
        if let lingerDeadline {
            if now.instant >= lingerDeadline { closeNow() }
            return
        }
        switch machine.checkTimeouts(now: now) {
        case .none:
            break
        case .close:
            closeNow()
        case .rejected(let error, let summary):
            logRejection(error, summary, since: now.instant)
            process(now: now)
        }
    }

    /// Removes the socket from the loop, has the loop close it and the worker forget the connection.
    func closeNow() {
        guard !isClosed else { return }
        isClosed = true
        registeredEvents = nil
        headArrived()
        worker.loop.closeSocket(fd)
        worker.connectionDidClose(self, token: token)
    }

    // MARK: - Events

    private func readable() {
        guard !isClosed else { return }
        let buffer = worker.readBuffer
        let received = recv(fd, buffer.baseAddress, buffer.count, 0)
        if received > 0 {
            guard lingerDeadline == nil else { return }
            let now = HTTPTime.now()
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<received])
            if proxyHeaderBytes != nil {
                receiveProxyHeader(bytes, now: now)
            } else {
                machine.receive(bytes, now: now)
            }
            process(now: now)
        } else if received == 0 {
            sawEndOfInput = true
            suspendReading()
            if lingerDeadline != nil {
                closeNow()
            } else {
                machine.peerClosedInput()
                process(now: .now())
            }
        } else {
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR: break
            default: closeNow()
            }
        }
    }

    private func writable() {
        guard !isClosed else { return }
        let now = HTTPTime.now()
        flush(now: now)
        if !isClosed && machine.output.isEmpty { process(now: now) }
    }

    // MARK: - Protocol

    /// Answers every complete buffered request, writes the output and closes when the protocol says so.
    private func process(now: HTTPTime) {
        processing: while !isClosed {
            switch machine.nextAction(now: now) {
            case .handle(let request):
                headArrived()
                let response = worker.handler.handle(request, from: remoteAddress)
                let summary = machine.respond(response, to: request, now: now)
                worker.record(AccessLogEntry(
                    remoteAddress: remoteAddress, request: request, status: summary.status.code,
                    bodyBytes: summary.bodyBytes, duration: .now - now.instant))
            case .rejected(let error, let summary):
                headArrived()
                logRejection(error, summary, since: now.instant)
            case .readMore, .close:
                flush(now: now)
                break processing
            case .waitForOutput:
                flush(now: now)
                if !machine.output.isEmpty { break processing }
            }
        }
        if !isClosed && machine.isClosing && machine.output.isEmpty { beginLingeringClose() }
    }

    private func logRejection(_ error: HTTPRequestError, _ summary: HTTPResponseEncoder.Summary,
                              since start: ContinuousClock.Instant) {
        log(method: error.method?.rawValue ?? "", target: error.target ?? "", summary: summary, userAgent: nil,
            since: start)
    }

    private func log(method: String, target: String, summary: HTTPResponseEncoder.Summary, userAgent: String?,
                     since start: ContinuousClock.Instant) {
        worker.record(AccessLogEntry(
            remoteAddress: remoteAddress, method: method, target: target, status: summary.status.code,
            bodyBytes: summary.bodyBytes, duration: .now - start, userAgent: userAgent))
    }

    /// Accumulates the PROXY header; once complete, takes the client address from it, applies the per-address
    /// limit to that address and hands the bytes after the header to the protocol. An invalid header closes the
    /// connection without an answer (the peer is not a balancer speaking the protocol), and is counted, so that a
    /// balancer configured without it shows in the metrics.
    private func receiveProxyHeader(_ bytes: UnsafeRawBufferPointer, now: HTTPTime) {
        proxyHeaderBytes?.append(contentsOf: bytes)
        guard let collected = proxyHeaderBytes else { return }
        switch PROXYHeaderParser.parse(collected) {
        case .incomplete:
            return
        case .invalid:
            worker.onLimit?(.invalidProxyHeader)
            closeNow()
        case .header(let header, let length):
            proxyHeaderBytes = nil
            if let source = header.source { remoteAddress = source.host }
            let admitted = ClientAddress.key(for: remoteAddress)
            guard worker.admission.admit(address: admitted) else {
                worker.onLimit?(.refusedPerAddress)
                TransportSocket.sendRefusal(fd, response: HTTPResponseEncoder.cannedResponse(.error(.serviceUnavailable)))
                closeNow()
                return
            }
            admittedAddress = admitted
            if collected.count > length { machine.receive(Array(collected[length...]), now: now) }
        }
    }

    /// Leaves the set of eviction candidates: the connection sent a complete head, was refused, or closed.
    private func headArrived() {
        guard let pendingNumber else { return }
        self.pendingNumber = nil
        worker.admission.clearPending(pendingNumber)
    }

    // MARK: - Writing

    /// Writes queued output until it is empty or the socket would block.
    private func flush(now: HTTPTime) {
        while !isClosed && !machine.output.isEmpty {
            let written = writeQueuedOutput()
            if written > 0 {
                machine.outputWritten(written, now: now)
                continue
            }
            let code = errno
            if written < 0 && code == EINTR { continue }
            if written < 0 && (code == EAGAIN || code == EWOULDBLOCK) {
                waitUntilWritable()
            } else {
                closeNow()
            }
            return
        }
        guard !isClosed else { return }
        if wantsWritability {
            wantsWritability = false
            updateInterest()
        }
        if lingerDeadline == nil && !machine.isClosing { resumeReading() }
    }

    /// One `send` for a single chunk, one `sendmsg` for several (up to 16).
    private func writeQueuedOutput() -> Int {
        machine.output.withReadableChunks(maxChunks: 16) { chunks in
            if chunks.count == 1 {
                return send(fd, chunks[0].baseAddress, chunks[0].count, TransportSocket.sendFlags)
            }
            return withUnsafeTemporaryAllocation(of: iovec.self, capacity: chunks.count) { vectors in
                for (index, chunk) in chunks.enumerated() {
                    vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: chunk.baseAddress),
                                           iov_len: chunk.count)
                }
                var message = msghdr()
                message.msg_iov = vectors.baseAddress
                message.msg_iovlen = numericCast(chunks.count)
                return sendmsg(fd, &message, TransportSocket.sendFlags)
            }
        }
    }

    private func waitUntilWritable() {
        wantsInput = false
        wantsWritability = true
        updateInterest()
    }

    // MARK: - Reading and closing

    private func suspendReading() {
        guard wantsInput else { return }
        wantsInput = false
        updateInterest()
    }

    private func resumeReading() {
        guard !wantsInput, !sawEndOfInput else { return }
        wantsInput = true
        updateInterest()
    }

    /// Tells the loop what the socket is waiting for; a socket waiting for nothing is removed, so that a hang-up,
    /// which the kernel reports whatever was asked, cannot wake the loop again and again.
    private func updateInterest() {
        guard !isClosed else { return }
        let wanted = (wantsInput ? Loop.readable : 0) | (wantsWritability ? Loop.writable : 0)
        switch (registeredEvents, wanted) {
        case (nil, 0):
            return
        case (nil, _):
            guard worker.loop.register(fd, token: token, events: wanted) else { return closeNow() }
            registeredEvents = wanted
        case (let current?, 0):
            _ = current
            worker.loop.remove(fd)
            registeredEvents = nil
        case (let current?, _) where current != wanted:
            guard worker.loop.modify(fd, token: token, events: wanted) else { return closeNow() }
            registeredEvents = wanted
        default:
            return
        }
    }

    /// Half-closes after the last response and discards input until the peer closes or the linger time passes.
    /// Lingering is skipped when it cannot protect anything: the peer has closed, or it asked to close and the
    /// socket holds no unread byte, so closing sends a FIN behind the response rather than a reset. This is the
    /// `Connection: close` path, where the extra half-close and read event would cost a noticeable share of
    /// each request (nginx makes the same choice).
    private func beginLingeringClose() {
        guard !isClosed, lingerDeadline == nil else { return }
        if sawEndOfInput || (machine.isClosingAtClientRequest && TransportSocket.pendingInput(fd) == .nothing) {
            closeNow()
            return
        }
        shutdown(fd, Int32(SHUT_WR))
        lingerDeadline = .now + worker.lingerTimeout
        resumeReading()
    }
}
