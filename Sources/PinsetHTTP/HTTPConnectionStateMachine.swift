/// The protocol side of one HTTP/1.1 connection: bytes in, requests out, responses in, bytes out, time injected.
///
/// A transport drives it with four kinds of event — bytes received (``receive(_:now:)``),
/// bytes written (``outputWritten(_:now:)``), end of input (``peerClosedInput()``) and clock ticks
/// (``checkTimeouts(now:)``) — and after each one calls ``nextAction(now:)`` until it returns
/// ``Action/readMore``, ``Action/waitForOutput`` or ``Action/close``, writing ``output`` in between.
///
/// Behaviour under hostile input:
/// - a request refused by ``HTTPRequestParser`` is answered once with a small error response and
///   `Connection: close`; nothing after it is read (RFC 9112 §9.6);
/// - the first request head (with its content, where content is accepted) must arrive within `requestHeadTimeout`
///   of the connection's start (accept), and every later one within `requestHeadTimeout` of its first byte,
///   however slowly it trickles in; a partial head is
///   then answered `408` and the connection closes, and a connection that never sent a byte is closed silently,
///   so silent sockets cannot hold a connection slot for the whole idle timeout;
/// - a connection making no progress in either direction for `idleTimeout` (an idle keep-alive connection, or a
///   peer that stops reading its responses) is closed silently;
/// - a request with `Expect: 100-continue` whose head is accepted gets an interim `100 Continue` before its
///   content is read; one refused by its head (a length above the limit, say) gets only the final status;
/// - pipelined requests are answered in order (RFC 9112 §9.3.2), but only while less than
///   `outputHighWaterMark` bytes are queued, so a client that never reads cannot make the server buffer without
///   bound; the transport should stop reading while output is pending.
///
/// Not thread-safe; a value belongs to one connection.
public struct HTTPConnectionStateMachine: Sendable {
    public struct Configuration: Sendable {
        public var limits: HTTPLimits
        /// Time allowed from the start of the connection to the end of its first request head, and from the first
        /// byte of each later request head to its last. Default 10 s.
        public var requestHeadTimeout: Duration
        /// Time a connection may make no progress before it is closed. Default 60 s.
        public var idleTimeout: Duration
        /// Queued output above which no further pipelined request is processed. Default 256 KiB.
        public var outputHighWaterMark: Int

        public init(
            limits: HTTPLimits = HTTPLimits(),
            requestHeadTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60),
            outputHighWaterMark: Int = 256 * 1024
        ) {
            self.limits = limits
            self.requestHeadTimeout = requestHeadTimeout
            self.idleTimeout = idleTimeout
            self.outputHighWaterMark = outputHighWaterMark
        }
    }

    /// What the transport must do next.
    public enum Action: Sendable {
        /// Run the handler and pass its response to ``HTTPConnectionStateMachine/respond(_:to:now:)``.
        case handle(HTTPRequestHead)
        /// The request was refused; the error response (`summary`) is queued and the connection is closing.
        /// Reported for access logs.
        case rejected(HTTPRequestError, HTTPResponseEncoder.Summary)
        /// Nothing to do until more bytes arrive.
        case readMore
        /// Write the queued output first; call ``HTTPConnectionStateMachine/nextAction(now:)`` again once it is
        /// written.
        case waitForOutput
        /// Write the queued output, then close the connection.
        case close
    }

    /// What a timer tick requires.
    public enum TimeoutAction: Sendable, Equatable {
        case none
        /// Close now, without writing anything more.
        case close
        /// The request head timed out; a `408` (`summary`) is queued; write it, then close.
        case rejected(HTTPRequestError, HTTPResponseEncoder.Summary)
    }

    private enum State: Sendable {
        case reading
        case awaitingResponse
        case closing
    }

    public let configuration: Configuration
    private var parser: HTTPRequestParser
    private var encoder = HTTPResponseEncoder()
    /// Bytes to write to the peer, in order.
    public private(set) var output = HTTPOutboundBuffer()
    private var state = State.reading
    private var draining = false
    private var inputClosed = false
    private var clientAskedToClose = false
    private var headStartedAt: ContinuousClock.Instant?
    private var lastReceiveAt: ContinuousClock.Instant
    /// When bytes last arrived or left: the idle timeout counts from here, and a full server closes the connection
    /// idle the longest first.
    public private(set) var lastProgressAt: ContinuousClock.Instant

    public init(configuration: Configuration = Configuration(), now: HTTPTime) {
        self.configuration = configuration
        self.parser = HTTPRequestParser(limits: configuration.limits)
        self.lastReceiveAt = now.instant
        self.lastProgressAt = now.instant
        self.headStartedAt = now.instant
    }

    /// Whether the connection will close once ``output`` is written.
    public var isClosing: Bool {
        if case .closing = state { return true }
        return false
    }

    /// Whether the connection is closing only because the client asked for it (`Connection: close`, or HTTP/1.0
    /// without keep-alive) and no byte after that request was received. A request's content is read whole before it
    /// is answered, so such a client has nothing more to send: the transport may close at once instead of lingering for input that will not
    /// come. After an error response or while draining this is false, since the client may still be sending.
    public var isClosingAtClientRequest: Bool {
        isClosing && clientAskedToClose && !draining && !parser.hasBufferedBytes
    }

    /// Whether nothing is in progress: no partial request, no unanswered request and no unwritten output.
    public var isIdle: Bool {
        if case .awaitingResponse = state { return false }
        return output.isEmpty && !parser.hasBufferedBytes
    }

    /// Records bytes read from the peer. Ignored once the connection is closing.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, now: HTTPTime) {
        guard !isClosing, !bytes.isEmpty else { return }
        noteArrival(now: now)
        parser.append(bytes)
    }

    /// Records bytes read from the peer. Ignored once the connection is closing.
    public mutating func receive(_ bytes: [UInt8], now: HTTPTime) {
        bytes.withUnsafeBytes { receive($0, now: now) }
    }

    private mutating func noteArrival(now: HTTPTime) {
        if headStartedAt == nil { headStartedAt = now.instant }
        lastReceiveAt = now.instant
        lastProgressAt = now.instant
    }

    /// Records that the peer will send nothing more (a read returned end of file). Requests already buffered are
    /// still answered; a partial request is dropped.
    public mutating func peerClosedInput() {
        inputClosed = true
    }

    /// The next step; see ``Action``.
    public mutating func nextAction(now: HTTPTime) -> Action {
        switch state {
        case .closing:
            return .close
        case .awaitingResponse:
            preconditionFailure("respond(_:to:now:) must answer the previous request first")
        case .reading:
            break
        }
        if output.count >= configuration.outputHighWaterMark { return .waitForOutput }
        switch parser.next() {
        case .head(let head):
            state = .awaitingResponse
            headStartedAt = parser.hasBufferedBytes ? lastReceiveAt : nil
            return .handle(head)
        case .failure(let error):
            return .rejected(error, queueErrorResponse(for: error, now: now))
        case .incomplete:
            if inputClosed {
                state = .closing
                return .close
            }
            if parser.takeContinueExpectation() {
                // RFC 9110 §10.1.1: the head is acceptable, so the client may send the content now rather than
                // after its own timeout. The final response follows once the content has arrived.
                output.append(Self.continueResponse)
                lastProgressAt = now.instant
            }
            return .readMore
        }
    }

    /// Queues the handler's response to `request`, which ``nextAction(now:)`` returned. The response carries
    /// `Connection: close` when the client asked for it or the server is draining, and the connection then closes.
    @discardableResult
    public mutating func respond(_ response: HTTPResponse, to request: HTTPRequestHead, now: HTTPTime) -> HTTPResponseEncoder.Summary {
        guard case .awaitingResponse = state else {
            preconditionFailure("respond(_:to:now:) called without a pending request")
        }
        let closes = !request.keepAlive || draining
        let connection: HTTPResponseEncoder.ConnectionField =
            closes ? .close : (request.version == .http1_0 ? .keepAlive : .none)
        let summary = encoder.encode(response, omitBody: request.method == .head, connection: connection,
                                     unixSeconds: now.unixSeconds, into: &output)
        state = closes ? .closing : .reading
        clientAskedToClose = !request.keepAlive
        lastProgressAt = now.instant
        return summary
    }

    /// Records that the transport wrote the first `byteCount` bytes of ``output``.
    public mutating func outputWritten(_ byteCount: Int, now: HTTPTime) {
        output.consume(byteCount)
        if byteCount > 0 { lastProgressAt = now.instant }
    }

    /// Starts a graceful shutdown: a connection with no partial request closes once its output is written; a
    /// partial request may still complete (within the head timeout) and is answered with `Connection: close`.
    public mutating func beginDraining() {
        draining = true
        if case .reading = state, !parser.hasBufferedBytes { state = .closing }
    }

    /// Applies the head and idle deadlines at `now`.
    public mutating func checkTimeouts(now: HTTPTime) -> TimeoutAction {
        switch state {
        case .awaitingResponse:
            return .none
        case .closing:
            return now.instant >= lastProgressAt + configuration.idleTimeout ? .close : .none
        case .reading:
            if let headStartedAt, now.instant >= headStartedAt + configuration.requestHeadTimeout {
                guard parser.hasBufferedBytes else {
                    state = .closing
                    return .close
                }
                // A body that did not arrive in time still names its request in the access log.
                let awaiting = parser.headAwaitingContent
                let error = HTTPRequestError(
                    .requestTimeout, "request not received within \(configuration.requestHeadTimeout)", method: awaiting?.method, target: awaiting?.target)
                return .rejected(error, queueErrorResponse(for: error, now: now))
            }
            if now.instant >= lastProgressAt + configuration.idleTimeout {
                state = .closing
                return .close
            }
            return .none
        }
    }

    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private mutating func queueErrorResponse(for error: HTTPRequestError, now: HTTPTime) -> HTTPResponseEncoder.Summary {
        defer { state = .closing }
        return encoder.encode(.error(error.status, allowingPOST: configuration.limits.acceptsContent), omitBody: error.method == .head, connection: .close,
                              unixSeconds: now.unixSeconds, into: &output)
    }
}
