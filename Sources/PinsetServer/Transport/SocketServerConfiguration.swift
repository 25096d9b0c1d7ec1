import Foundation
import PinsetHTTP
import PinsetLiveCheck

/// Settings of a ``SocketServer``.
public struct SocketServerConfiguration: Sendable {
    /// Address to bind: an IPv4 or IPv6 literal or a resolvable name. Default `"127.0.0.1"`.
    public var host: String
    /// Port to bind; 0 picks a free ephemeral port, which ``SocketServer/start()`` returns. Default 0.
    public var port: UInt16
    /// Length of the kernel's queue of not-yet-accepted connections (`listen(2)`). Default 511.
    public var backlog: Int32
    /// Most connections served at once. Beyond it the oldest connection that has not sent a complete request head
    /// is evicted to make room; when there is none, the new connection is accepted, answered with a canned
    /// `503 Service Unavailable` and closed, so the backlog never fills. Default 1024.
    public var maxConnections: Int
    /// Most connections open at once from one client address; beyond it the canned `503`. Default 32: a client
    /// needs one connection (browsers open at most 6 per origin), 32 leaves room for a few dozen clients behind
    /// one NAT, and one address can then hold at most 3 % of the default 1024 slots. Behind a load balancer
    /// without the PROXY protocol every client has the balancer's address: raise it there.
    public var maxConnectionsPerAddress: Int
    /// Time allowed from accept to the end of the first request head (and from the first byte of each later head to
    /// its end); then `408` and close, or a silent close when nothing was sent. Default 10 s.
    public var requestHeadTimeout: Duration
    /// Time a connection may make no progress (idle keep-alive, or a peer not reading) before it is closed
    /// silently. Default 60 s.
    public var idleTimeout: Duration
    /// After its last response, how long a closing connection keeps discarding input while waiting for the peer
    /// to close, so that unread input does not make the kernel reset the connection and destroy the response
    /// in flight. Default 2 s.
    public var lingerTimeout: Duration
    /// Whether every connection must start with a PROXY protocol header (v1 or v2, as haproxy's `send-proxy` /
    /// `send-proxy-v2` and nginx's `proxy_protocol on` send it). The header's client address then replaces the
    /// socket's in per-address limits and access logs; a connection without a valid header within the request-head
    /// timeout is closed without an answer. Enable it only behind a balancer that sends it. Default false.
    public var proxyProtocol: Bool
    /// With ``proxyProtocol``, the peers whose PROXY header is believed (the balancers' addresses); a connection from
    /// any other peer is closed at once, without an answer, and counted. Without it, any peer that reaches the port
    /// may name any client address in its header (and so take every per-address allowance in turn, and write any
    /// address into the access log): leave it nil only where nothing but the balancers can reach the port.
    /// Default nil.
    public var trustedProxies: [IPAddressRange]?
    /// Request size limits, and whether requests may carry content (``HTTPLimits/maxContentBytes``; default none).
    public var limits: HTTPLimits
    /// Number of event loops (threads on epoll, serial queues on Dispatch) that accept and serve connections.
    /// Default: the active processor count.
    public var workerQueues: Int
    /// What tells the event loops that sockets are ready. Default ``SocketTransport/platformDefault``: epoll on
    /// Linux, Dispatch elsewhere.
    public var transport: SocketTransport

    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        backlog: Int32 = 511,
        maxConnections: Int = 1024,
        maxConnectionsPerAddress: Int = 32,
        requestHeadTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        lingerTimeout: Duration = .seconds(2),
        proxyProtocol: Bool = false,
        trustedProxies: [IPAddressRange]? = nil,
        limits: HTTPLimits = HTTPLimits(),
        workerQueues: Int = ProcessInfo.processInfo.activeProcessorCount,
        transport: SocketTransport = .platformDefault
    ) {
        self.host = host
        self.port = port
        self.backlog = backlog
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.requestHeadTimeout = requestHeadTimeout
        self.idleTimeout = idleTimeout
        self.lingerTimeout = lingerTimeout
        self.proxyProtocol = proxyProtocol
        self.trustedProxies = trustedProxies
        self.limits = limits
        self.workerQueues = workerQueues
        self.transport = transport
    }
}
