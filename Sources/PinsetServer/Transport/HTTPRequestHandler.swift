import PinsetHTTP

/// Answers requests for ``SocketServer``.
///
/// `handle` runs synchronously on the serial queue of the connection's worker, so it must be fast and must never
/// block: while it runs, no other connection on that worker makes progress. It is called concurrently from
/// different workers, hence `Sendable`. Protocol errors (400, 405, 408, 413, 414, 431, 501, 505) never reach it.
public protocol HTTPRequestHandler: Sendable {
    func handle(_ request: HTTPRequestHead) -> HTTPResponse

    /// Answers a request from the client at `address` (the socket's peer, or the PROXY header's source). Handlers
    /// that limit clients by address implement it; the default ignores the address.
    func handle(_ request: HTTPRequestHead, from address: String) -> HTTPResponse
}

extension HTTPRequestHandler {
    public func handle(_ request: HTTPRequestHead, from address: String) -> HTTPResponse { handle(request) }
}

/// An ``HTTPRequestHandler`` made from a closure.
public struct ClosureRequestHandler: HTTPRequestHandler {
    private let body: @Sendable (HTTPRequestHead) -> HTTPResponse

    public init(_ body: @escaping @Sendable (HTTPRequestHead) -> HTTPResponse) {
        self.body = body
    }

    public func handle(_ request: HTTPRequestHead) -> HTTPResponse { body(request) }
}
