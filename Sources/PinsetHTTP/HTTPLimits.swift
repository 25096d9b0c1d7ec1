/// Size limits that bound the memory and CPU a single client can make the parser spend.
///
/// Every limit is enforced while bytes arrive, not only once a request is complete, so a client that streams an
/// endless request line or header section is rejected as soon as it crosses the limit (RFC 9112 §3, §5).
public struct HTTPLimits: Sendable, Hashable {
    /// Longest request line, in bytes, excluding its CRLF. Any empty lines a client sends before the request line
    /// count towards it. Longer lines are answered with `414 URI Too Long`. Default 2048.
    public var maxRequestLineBytes: Int
    /// Largest header section, in bytes, from the first field line through the empty line that ends the head.
    /// Larger sections are answered with `431 Request Header Fields Too Large`. Default 8192.
    public var maxHeaderBytes: Int
    /// Most field lines accepted in one request; more are answered with `431`. Default 64.
    public var maxHeaderCount: Int

    public init(maxRequestLineBytes: Int = 2048, maxHeaderBytes: Int = 8192, maxHeaderCount: Int = 64) {
        precondition(maxRequestLineBytes > 0 && maxHeaderBytes > 0 && maxHeaderCount >= 0, "HTTP limits must be positive")
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
    }
}
