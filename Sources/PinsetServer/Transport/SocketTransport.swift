/// What tells a ``SocketServer`` that its sockets are ready. Both serve the same HTTP, limits, admission,
/// deadlines, PROXY protocol and access log; only the readiness layer under them differs.
public enum SocketTransport: String, Sendable, CaseIterable {
    /// One thread per worker in `epoll_wait(2)`, owning its sockets: Linux only, and its default, being the
    /// cheaper per request (no thread hand-off per event).
    case epoll
    /// Dispatch read and write sources on one serial queue per worker: every platform (kqueue underneath on
    /// Darwin, epoll on Linux); the default where epoll does not exist.
    case dispatch

    /// The transport a server uses unless configured otherwise: epoll on Linux, Dispatch elsewhere.
    public static var platformDefault: SocketTransport {
        #if os(Linux)
        .epoll
        #else
        .dispatch
        #endif
    }

    /// The transports this build can run.
    public static var available: [SocketTransport] {
        #if os(Linux)
        [.epoll, .dispatch]
        #else
        [.dispatch]
        #endif
    }
}
