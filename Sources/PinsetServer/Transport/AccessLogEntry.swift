import PinsetHTTP

/// One answered request, reported to ``SocketServer``'s `onRequest` callback on the loop thread that served it.
///
/// Requests refused by the protocol layer are reported too, with `method` and `target` empty when the request line
/// could not be parsed. Connections closed without a response (idle timeout, peer reset) are not reported.
public struct AccessLogEntry: Sendable {
    /// The peer's IP address, without port.
    public var remoteAddress: String
    public var method: String
    /// The request target as sent (path and query, with percent-encoded unreserved characters of the path
    /// decoded); untrusted input, escape it before writing it to a log.
    public var target: String
    public var status: Int
    /// Body bytes queued for the peer (0 for HEAD, 304 and 204).
    public var bodyBytes: Int
    /// From the arrival of the bytes that completed the request head to the response being queued.
    public var duration: Duration
    /// Read from the request's head only when asked for, so that entries which only feed metrics make no string
    /// for it.
    public var userAgent: String? {
        get {
            switch agent {
            case .value(let value): value
            case .field(let head): head.header("User-Agent")
            }
        }
        set { agent = .value(newValue) }
    }

    private enum Agent: Sendable {
        case value(String?)
        case field(of: HTTPRequestHead)
    }

    private var agent: Agent

    public init(
        remoteAddress: String,
        method: String,
        target: String,
        status: Int,
        bodyBytes: Int,
        duration: Duration,
        userAgent: String?
    ) {
        self.remoteAddress = remoteAddress
        self.method = method
        self.target = target
        self.status = status
        self.bodyBytes = bodyBytes
        self.duration = duration
        self.agent = .value(userAgent)
    }

    init(remoteAddress: String, request: HTTPRequestHead, status: Int, bodyBytes: Int, duration: Duration) {
        self.remoteAddress = remoteAddress
        self.method = request.method.rawValue
        self.target = request.target
        self.status = status
        self.bodyBytes = bodyBytes
        self.duration = duration
        self.agent = .field(of: request)
    }
}
