import Foundation

/// An incremental HTTP/1.1 request parser: heads, and `Content-Length` content where a listener allows it (RFC 9112 §2–§6).
///
/// Bytes are appended as they arrive; ``next()`` validates each complete line once, in place over the buffer, so
/// feeding a request one byte at a time costs linear time and a valid request allocates only its head. Limits are
/// checked on every call, before a line is complete, so a hostile client cannot make the buffer grow beyond
/// ``HTTPLimits``. Pipelined requests stay buffered and are returned one per call.
///
/// Strictness, chosen to leave no request-smuggling surface:
/// - lines must end in CRLF; a bare LF or bare CR is rejected (RFC 9112 §2.2 permits either choice);
/// - empty lines before the request line are ignored (RFC 9112 §2.2) but count towards the request-line limit;
/// - the request line is split on single spaces only; origin-form targets are accepted, and absolute-form ones
///   (RFC 9112 §3.2.2) reduced to their path and query after an authority syntax check;
/// - obs-fold, whitespace before the colon, non-token field names and CTL/NUL in values are rejected (RFC 9112
///   §5.1, §5.2; RFC 9110 §5.5);
/// - by default (``HTTPLimits/maxContentBytes`` 0), `Transfer-Encoding` in any form and `Content-Length` other than
///   zero are rejected, because such a listener never reads content and must not guess where the next request
///   starts (RFC 9112 §6.3). A listener that accepts content reads exactly `Content-Length` bytes after the head
///   and returns them as ``HTTPRequestHead/body``, or decodes chunked content strictly (``ChunkedContentDecoder``);
///   it refuses a repeated or malformed `Content-Length` (400), both framings at once or chunked not last (400), a
///   coding other than chunked (501), `Transfer-Encoding` in HTTP/1.0 (400, RFC 9112 §6.1), and content above the
///   limit before reading it (413);
/// - HTTP/1.1 requests need exactly one valid `Host` field (RFC 9112 §3.2).
///
/// After it returns a failure the parser is finished: every later ``next()`` returns the same failure.
/// Not thread-safe; a value belongs to one connection.
public struct HTTPRequestParser: Sendable {
    /// The outcome of ``next()``.
    public enum Result: Sendable {
        case head(HTTPRequestHead)
        case failure(HTTPRequestError)
        case incomplete
    }

    public let limits: HTTPLimits
    private var buffer: [UInt8] = []
    /// First byte of the request being parsed, including any empty lines before its request line.
    private var headStart = 0
    /// First byte of the line being parsed.
    private var lineStart = 0
    /// First byte not yet searched for LF.
    private var scanIndex = 0
    /// First byte of a partial request line not yet checked to be a method token (see `partialMethodError`);
    /// nil once the method of the current line is complete.
    private var methodScanIndex: Int? = 0
    private var requestLine: RequestLine?
    /// First byte of the header section (valid once `requestLine` is set).
    private var fieldStart = 0
    private var fields: FieldSummary
    private var failure: HTTPRequestError?
    /// A complete head whose content is still arriving, with the buffer range the content will occupy.
    private var pendingContent: (head: HTTPRequestHead, start: Int, end: Int)?
    /// A complete head whose chunked content is still arriving.
    private var pendingChunked: (head: HTTPRequestHead, decoder: ChunkedContentDecoder)?
    /// Whether the head awaiting content asked for `100 Continue` and has not been told yet.
    private var continueExpected = false

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
        self.fields = FieldSummary(maxContentBytes: limits.maxContentBytes)
    }

    /// Whether bytes of a request that has not been returned yet are buffered.
    public var hasBufferedBytes: Bool { buffer.count > headStart }

    /// Number of buffered bytes not yet returned as part of a head.
    public var bufferedByteCount: Int { buffer.count - headStart }

    /// Whether a complete head awaits its content and asked for an interim `100 Continue` (RFC 9110 §10.1.1,
    /// §15.2.1), which the caller should send once; true at most once per request. A head whose announced length
    /// is too large never gets here: it is refused before, so the client hears the final status only.
    public mutating func takeContinueExpectation() -> Bool {
        defer { continueExpected = false }
        return continueExpected
    }

    /// Appends bytes received from the peer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Appends bytes received from the peer.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The head of a request whose content is still arriving, for saying which request a timeout ended.
    public var headAwaitingContent: HTTPRequestHead? {
        pendingContent?.head ?? pendingChunked?.head
    }

    /// Returns the next complete request head, the error that ends the connection, or ``Result/incomplete``.
    public mutating func next() -> Result {
        if let failure { return .failure(failure) }
        if let pending = pendingContent {
            guard buffer.count >= pending.end else { return .incomplete }
            var head = pending.head
            head.body = Array(buffer[pending.start..<pending.end])
            pendingContent = nil
            continueExpected = false
            finishRequest(at: pending.end)
            return .head(head)
        }
        if var pending = pendingChunked {
            let progress = buffer.withUnsafeBufferPointer { pending.decoder.advance($0) }
            pendingChunked = pending
            switch progress {
            case .incomplete:
                return .incomplete
            case .failure(var error):
                error.method = pending.head.method
                error.target = pending.head.target
                return fail(error)
            case .complete(let end):
                var head = pending.head
                head.body = pending.decoder.content
                pendingChunked = nil
                continueExpected = false
                finishRequest(at: end)
                return .head(head)
            }
        }
        while true {
            guard let lineFeed = findLineFeed() else {
                scanIndex = buffer.count
                if let error = incompleteLineError() { return fail(error) }
                return .incomplete
            }
            scanIndex = lineFeed + 1
            switch processLine(lineFeed: lineFeed) {
            case .continue:
                lineStart = lineFeed + 1
                if requestLine == nil { methodScanIndex = lineStart }
            case .complete(let head):
                let contentLength = fields.contentLength ?? 0
                let chunked = fields.chunked
                // RFC 9110 §10.1.1: an HTTP/1.0 client cannot understand an interim response.
                continueExpected = fields.expectsContinue && head.version == .http1_1 && (chunked || contentLength > 0)
                requestLine = nil
                fields = FieldSummary(maxContentBytes: limits.maxContentBytes)
                if chunked {
                    pendingChunked = (head, ChunkedContentDecoder(limits: limits, start: lineFeed + 1))
                    return next()
                }
                guard contentLength == 0 else {
                    // The head is returned with its content; until then it counts as buffered, unanswered bytes.
                    pendingContent = (head, lineFeed + 1, lineFeed + 1 + contentLength)
                    return next()
                }
                finishRequest(at: lineFeed + 1)
                return .head(head)
            case .failure(let error):
                return fail(error)
            }
        }
    }

    /// Moves past a returned request, whose last byte is just before `end`.
    private mutating func finishRequest(at end: Int) {
        lineStart = end
        scanIndex = end
        methodScanIndex = end
        headStart = end
    }

    private mutating func fail(_ error: HTTPRequestError) -> Result {
        var error = error
        if let requestLine {
            error.method = requestLine.method
            error.target = requestLine.target
        }
        failure = error
        return .failure(error)
    }

    /// Drops bytes of requests already returned, so the buffer holds at most one head plus what a read delivered.
    private mutating func compact() {
        guard headStart > 0 else { return }
        if headStart == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else if headStart >= 4096 || headStart * 2 >= buffer.count {
            buffer.removeSubrange(0..<headStart)
        } else {
            return
        }
        lineStart -= headStart
        scanIndex -= headStart
        methodScanIndex = methodScanIndex.map { max(0, $0 - headStart) }
        fieldStart = max(0, fieldStart - headStart)
        if let pending = pendingContent {
            pendingContent = (pending.head, pending.start - headStart, pending.end - headStart)
        }
        pendingChunked?.decoder.shift(by: headStart)
        headStart = 0
    }

    private func findLineFeed() -> Int? {
        guard scanIndex < buffer.count else { return nil }
        return buffer.withUnsafeBytes { bytes -> Int? in
            guard let base = bytes.baseAddress,
                  let found = memchr(base + scanIndex, Int32(HTTPSyntax.lf), bytes.count - scanIndex)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    /// Enforces the limits on a line whose terminator has not arrived yet, and rejects a request line whose method
    /// is already known to be invalid, so binary garbage gets its 400 at once rather than a 414 later.
    private mutating func incompleteLineError() -> HTTPRequestError? {
        if requestLine == nil {
            if let error = partialMethodError() { return error }
            // `maxRequestLineBytes + 1` bytes may still be a maximal line followed by its CR.
            if buffer.count - headStart > limits.maxRequestLineBytes + 1 {
                return HTTPRequestError(.requestLineTooLong, "request line longer than \(limits.maxRequestLineBytes) bytes")
            }
        } else if buffer.count - fieldStart > limits.maxHeaderBytes {
            return HTTPRequestError(.headerSectionTooLarge, "header section larger than \(limits.maxHeaderBytes) bytes")
        }
        return nil
    }

    /// Checks the bytes of a partial request line up to its first space: they must be token characters. A CR is
    /// left for the complete-line check, since it may start the CRLF of an empty line.
    private mutating func partialMethodError() -> HTTPRequestError? {
        guard var index = methodScanIndex else { return nil }
        while index < buffer.count {
            let byte = buffer[index]
            if byte == HTTPSyntax.space || byte == HTTPSyntax.cr {
                methodScanIndex = nil
                return nil
            }
            guard HTTPSyntax.isTokenCharacter(byte) else {
                return HTTPRequestError(.malformedRequestLine, "invalid byte 0x\(String(byte, radix: 16)) in method")
            }
            index += 1
        }
        methodScanIndex = index
        return nil
    }

    private enum LineOutcome {
        case `continue`
        case complete(HTTPRequestHead)
        case failure(HTTPRequestError)
    }

    private mutating func processLine(lineFeed: Int) -> LineOutcome {
        guard lineFeed > lineStart, buffer[lineFeed - 1] == HTTPSyntax.cr else {
            return .failure(HTTPRequestError(.invalidLineTerminator, "line terminated by a bare LF"))
        }
        let contentEnd = lineFeed - 1
        guard let requestLine else {
            if contentEnd - headStart > limits.maxRequestLineBytes {
                return .failure(HTTPRequestError(.requestLineTooLong, "request line longer than \(limits.maxRequestLineBytes) bytes"))
            }
            if contentEnd == lineStart { return .continue }
            let parsed = buffer.withUnsafeBufferPointer {
                RequestLine.parse(UnsafeBufferPointer(rebasing: $0[lineStart..<contentEnd]))
            }
            switch parsed {
            case .success(let line):
                self.requestLine = line
                fieldStart = lineFeed + 1
                return .continue
            case .failure(let error):
                return .failure(error)
            }
        }
        if lineFeed + 1 - fieldStart > limits.maxHeaderBytes {
            return .failure(HTTPRequestError(.headerSectionTooLarge, "header section larger than \(limits.maxHeaderBytes) bytes"))
        }
        if contentEnd == lineStart { return complete(requestLine, fieldEnd: lineStart) }
        fields.count += 1
        if fields.count > limits.maxHeaderCount {
            return .failure(HTTPRequestError(.tooManyHeaders, "more than \(limits.maxHeaderCount) header fields"))
        }
        let error = buffer.withUnsafeBufferPointer {
            fields.addFieldLine(UnsafeBufferPointer(rebasing: $0[lineStart..<contentEnd]))
        }
        if let error { return .failure(error) }
        return .continue
    }

    private func complete(_ requestLine: RequestLine, fieldEnd: Int) -> LineOutcome {
        if requestLine.version == .http1_1 && fields.hostCount == 0 {
            return .failure(HTTPRequestError(.invalidHost, "HTTP/1.1 request without Host"))
        }
        if requestLine.version == .http1_0 && fields.chunked {
            // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
            return .failure(HTTPRequestError(.invalidContentLength, "Transfer-Encoding is not defined for HTTP/1.0"))
        }
        switch requestLine.method {
        case .get, .head:
            break
        case .post where limits.acceptsContent:
            break
        case .other(let method):
            return .failure(HTTPRequestError(.methodNotAllowed, "method \(method) is not allowed"))
        }
        let head = HTTPRequestHead(
            method: requestLine.method,
            target: requestLine.target,
            version: requestLine.version,
            keepAlive: fields.connection.keepsAlive(version: requestLine.version),
            fieldLines: fieldEnd > fieldStart ? Array(buffer[fieldStart..<fieldEnd]) : []
        )
        return .complete(head)
    }
}
