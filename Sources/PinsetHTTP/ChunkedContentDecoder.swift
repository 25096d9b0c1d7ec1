/// Decodes chunked request content (RFC 9112 §7.1) incrementally, over the parser's buffer.
///
/// Strict on purpose, since the framing decides where the next request starts (RFC 9112 §6.3, §11.2): a chunk
/// size is one or more hex digits, optionally followed by well-formed chunk extensions (ignored, §7.1.1); every
/// line ends in CRLF; chunk data is followed by exactly CRLF; trailer fields are checked like header fields and
/// then discarded (§7.1.2). Bounds, each checked as bytes arrive so the result never depends on how the stream
/// was split: the decoded content (``HTTPLimits/maxContentBytes``, 413 as soon as a chunk size would exceed
/// it), every chunk-size line (``maxLineBytes``), the trailer section (``HTTPLimits/maxHeaderBytes`` and
/// ``HTTPLimits/maxHeaderCount``, 431) and the whole framed content on the wire
/// (``HTTPLimits/maxChunkedWireBytes``, 413), so many tiny chunks cannot make the buffer grow past the limits.
/// Time is bounded by the caller: the content is part of the request the head deadline covers.
struct ChunkedContentDecoder: Sendable {
    /// Longest chunk-size line, extensions included, CRLF excluded.
    static let maxLineBytes = 256

    private enum State: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailer(bytes: Int, count: Int)
    }

    enum Progress {
        case incomplete
        /// The content is complete; the request's last byte is just before `end`.
        case complete(end: Int)
        case failure(HTTPRequestError)
    }

    let limits: HTTPLimits
    /// First byte of the framed content in the buffer.
    private(set) var start: Int
    /// First byte not yet decoded.
    private(set) var position: Int
    private var state = State.size
    private(set) var content: [UInt8] = []

    init(limits: HTTPLimits, start: Int) {
        self.limits = limits
        self.start = start
        self.position = start
    }

    /// Moves the buffer positions after the parser dropped `offset` bytes in front of them.
    mutating func shift(by offset: Int) {
        start -= offset
        position -= offset
    }

    /// Decodes what `buffer` holds past ``position``.
    mutating func advance(_ buffer: UnsafeBufferPointer<UInt8>) -> Progress {
        while true {
            let progress = step(buffer)
            if position - start > limits.maxChunkedWireBytes {
                return .failure(HTTPRequestError(.contentTooLarge, "the chunked content takes more than \(limits.maxChunkedWireBytes) bytes with its framing"))
            }
            switch progress {
            case .some(let outcome): return outcome
            case .none: continue
            }
        }
    }

    /// One state transition; nil when it made progress and another may follow.
    private mutating func step(_ buffer: UnsafeBufferPointer<UInt8>) -> Progress? {
        switch state {
        case .size:
            switch line(in: buffer, maxBytes: Self.maxLineBytes, tooLong: .malformedChunk, "a chunk-size line is longer than \(Self.maxLineBytes) bytes") {
            case .incomplete: return .incomplete
            case .failure(let error): return .failure(error)
            case .line(let range, let next):
                switch chunkSize(UnsafeBufferPointer(rebasing: buffer[range])) {
                case .failure(let error): return .failure(error)
                case .success(let size):
                    position = next
                    state = size == 0 ? .trailer(bytes: 0, count: 0) : .data(remaining: size)
                    return nil
                }
            }
        case .data(let remaining):
            let available = min(remaining, buffer.count - position)
            guard available > 0 else { return .incomplete }
            content.append(contentsOf: buffer[position..<(position + available)])
            position += available
            state = remaining == available ? .dataEnd : .data(remaining: remaining - available)
            return nil
        case .dataEnd:
            guard buffer.count - position >= 2 else {
                if buffer.count > position && buffer[position] != HTTPSyntax.cr { return Self.missingDataCRLF }
                return .incomplete
            }
            guard buffer[position] == HTTPSyntax.cr, buffer[position + 1] == HTTPSyntax.lf else { return Self.missingDataCRLF }
            position += 2
            state = .size
            return nil
        case .trailer(let bytes, let count):
            let allowance = limits.maxHeaderBytes - bytes
            switch line(in: buffer, maxBytes: allowance, tooLong: .headerSectionTooLarge, "the trailer section is larger than \(limits.maxHeaderBytes) bytes") {
            case .incomplete: return .incomplete
            case .failure(let error): return .failure(error)
            case .line(let range, let next):
                position = next
                if range.isEmpty { return .complete(end: next) }
                guard count < limits.maxHeaderCount else {
                    return .failure(HTTPRequestError(.tooManyHeaders, "the trailer section has more than \(limits.maxHeaderCount) fields"))
                }
                if let problem = FieldSummary.fieldLineProblem(UnsafeBufferPointer(rebasing: buffer[range])) {
                    return .failure(HTTPRequestError(.malformedHeader, "a trailer field is malformed: \(problem)"))
                }
                state = .trailer(bytes: bytes + next - range.lowerBound, count: count + 1)
                return nil
            }
        }
    }

    private static let missingDataCRLF = Progress.failure(HTTPRequestError(.malformedChunk, "chunk data is not followed by CRLF"))

    private enum Line {
        case incomplete
        /// The line's content without CRLF, and the first byte after it.
        case line(Range<Int>, next: Int)
        case failure(HTTPRequestError)
    }

    /// The CRLF-terminated line at ``position``, at most `maxBytes` long without its CRLF. A partial line is
    /// refused once it is longer than `maxBytes` + 1 (the extra byte may be its CR), which is exactly when the
    /// complete line would be refused, so splitting never changes the outcome.
    private func line(in buffer: UnsafeBufferPointer<UInt8>, maxBytes: Int, tooLong code: HTTPRequestError.Code, _ reason: @autoclosure () -> String) -> Line {
        var index = position
        let scanEnd = min(buffer.count, position + maxBytes + 2)
        while index < scanEnd && buffer[index] != HTTPSyntax.lf { index += 1 }
        guard index < scanEnd else {
            return buffer.count - position > maxBytes + 1 ? .failure(HTTPRequestError(code, reason())) : .incomplete
        }
        guard index > position, buffer[index - 1] == HTTPSyntax.cr else {
            return .failure(HTTPRequestError(.invalidLineTerminator, "a line of the chunked content ends in a bare LF"))
        }
        guard index - 1 - position <= maxBytes else { return .failure(HTTPRequestError(code, reason())) }
        return .line(position..<(index - 1), next: index + 1)
    }

    /// `chunk-size [ chunk-ext ]`: hex digits, then `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`
    /// (RFC 9112 §7.1, §7.1.1). The size must fit in what is left of ``HTTPLimits/maxContentBytes``.
    private func chunkSize(_ line: UnsafeBufferPointer<UInt8>) -> Swift.Result<Int, HTTPRequestError> {
        var index = 0
        var size = 0
        let allowance = limits.maxContentBytes - content.count
        while index < line.count, let digit = Self.hexValue(line[index]) {
            size = size * 16 + digit
            // Checked per digit, so a long run of digits can neither overflow nor be accepted.
            if size > allowance {
                return .failure(HTTPRequestError(.contentTooLarge, "the chunked content is larger than \(limits.maxContentBytes) bytes"))
            }
            index += 1
        }
        guard index > 0 else { return .failure(HTTPRequestError(.malformedChunk, "a chunk size is not a hexadecimal number")) }
        guard Self.isValidExtensionList(line, from: index) else {
            return .failure(HTTPRequestError(.malformedChunk, "a chunk size is followed by a malformed chunk extension"))
        }
        return .success(size)
    }

    private static func isValidExtensionList(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var index = start
        func skipWhitespace() { while index < line.count && HTTPSyntax.isWhitespace(line[index]) { index += 1 } }
        func token() -> Bool {
            let first = index
            while index < line.count && HTTPSyntax.isTokenCharacter(line[index]) { index += 1 }
            return index > first
        }
        /// `quoted-string` of RFC 9110 §5.6.4, starting at the opening quote.
        func quotedString() -> Bool {
            index += 1
            while index < line.count {
                let byte = line[index]
                if byte == UInt8(ascii: "\"") { index += 1; return true }
                if byte == UInt8(ascii: "\\") {
                    guard index + 1 < line.count, HTTPSyntax.isFieldValueCharacter(line[index + 1]) else { return false }
                    index += 2
                    continue
                }
                guard HTTPSyntax.isFieldValueCharacter(byte) else { return false }
                index += 1
            }
            return false
        }
        while index < line.count {
            skipWhitespace()
            guard index < line.count, line[index] == UInt8(ascii: ";") else { return false }
            index += 1
            skipWhitespace()
            guard token() else { return false }
            let afterName = index
            skipWhitespace()
            guard index < line.count, line[index] == UInt8(ascii: "=") else {
                // BWS is allowed only before a `;` or `=` that follows it, never at the end of the line.
                index = afterName
                continue
            }
            index += 1
            skipWhitespace()
            if index < line.count && line[index] == UInt8(ascii: "\"") {
                guard quotedString() else { return false }
            } else {
                guard token() else { return false }
            }
        }
        return true
    }

    @inline(__always)
    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
