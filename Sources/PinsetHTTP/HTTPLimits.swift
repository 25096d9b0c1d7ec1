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
    /// Largest request content, in bytes, framed by `Content-Length` (RFC 9112 §6.2) or chunked (§7.1). 0 (the
    /// default) refuses any content and any method but GET and HEAD, as a listener that only serves files needs.
    /// Above 0 the listener also accepts POST; a larger announced length is answered `413 Content Too Large`
    /// before any of the content is read, and chunked content as soon as a chunk size would exceed it.
    public var maxContentBytes: Int

    public init(maxRequestLineBytes: Int = 2048, maxHeaderBytes: Int = 8192, maxHeaderCount: Int = 64, maxContentBytes: Int = 0) {
        precondition(maxRequestLineBytes > 0 && maxHeaderBytes > 0 && maxHeaderCount >= 0 && maxContentBytes >= 0, "HTTP limits must be positive")
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxContentBytes = maxContentBytes
    }

    /// Most bytes chunked content may take on the wire, framing and trailers included: twice the largest content,
    /// a trailer section, and the last chunk. Beyond it the request is answered 413, so a stream of tiny chunks
    /// or long chunk extensions cannot hold the connection's buffer (real clients send chunks of kilobytes, whose
    /// framing is a few bytes each).
    public var maxChunkedWireBytes: Int { 2 * maxContentBytes + maxHeaderBytes + 8 }

    /// Most bytes the parser buffers for one request not yet returned: a maximal request line and its CRLF, the
    /// header section, and the content with its framing plus one partial framing line.
    public var maxBufferedRequestBytes: Int {
        let content = maxContentBytes == 0 ? 0 : maxChunkedWireBytes + max(ChunkedContentDecoder.maxLineBytes, maxHeaderBytes) + 1
        return maxRequestLineBytes + 2 + maxHeaderBytes + content
    }

    /// Whether requests may carry content (``maxContentBytes`` above 0).
    public var acceptsContent: Bool { maxContentBytes > 0 }
}
