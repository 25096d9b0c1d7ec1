/// A response produced by a request handler.
///
/// `body` is a copy-on-write array: a handler that serves a cached buffer hands over a reference, and the encoder
/// writes large bodies straight from that storage without copying them. The encoder owns framing: handler fields
/// named `Content-Length`, `Transfer-Encoding`, `Connection` or `Date` are dropped and replaced by its own, and a
/// field whose name is not a token, a value or reason phrase containing CR, LF, NUL or another control byte, or a
/// status code outside 100...999 turns the response into a `500`, so a handler can never split a response.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    /// Fields written after `Date`, in order.
    public var headers: [(String, String)]
    /// The content. Omitted on the wire for `HEAD` (the `Content-Length` still describes it) and for statuses
    /// that forbid content (1xx, 204, 304).
    public var body: [UInt8]

    public init(status: HTTPStatus = .ok, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The small `text/plain` response the protocol layer sends for a refused request. `405` carries
    /// `Allow: GET, HEAD` (RFC 9110 §15.5.6), with `POST` on a listener that accepts content.
    public static func error(_ status: HTTPStatus, allowingPOST: Bool = false) -> HTTPResponse {
        var headers = [("Content-Type", "text/plain; charset=utf-8")]
        if status == .methodNotAllowed { headers.append(("Allow", allowingPOST ? "GET, HEAD, POST" : "GET, HEAD")) }
        return HTTPResponse(status: status, headers: headers, body: Array("\(status.reason)\n".utf8))
    }
}
