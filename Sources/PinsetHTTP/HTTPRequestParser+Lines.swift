/// The parts of a validated request line (RFC 9112 §3).
struct RequestLine: Sendable {
    var method: HTTPMethod
    var target: String
    var version: HTTPVersion

    /// Parses `method SP request-target SP HTTP-version` (without CRLF). Syntax errors give 400; a well-formed but
    /// unsupported version gives 505, checked last so that garbage is never reported as a version problem.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Swift.Result<RequestLine, HTTPRequestError> {
        var index = 0
        while index < line.count && HTTPSyntax.isTokenCharacter(line[index]) { index += 1 }
        guard index > 0, index < line.count, line[index] == HTTPSyntax.space else {
            return .failure(HTTPRequestError(.malformedRequestLine, "request line does not start with a method token and a space"))
        }
        let method = Self.method(UnsafeBufferPointer(rebasing: line[0..<index]))
        let targetStart = index + 1
        var targetEnd = targetStart
        while targetEnd < line.count && line[targetEnd] != HTTPSyntax.space { targetEnd += 1 }
        guard targetEnd > targetStart, targetEnd < line.count else {
            return .failure(HTTPRequestError(.malformedRequestLine, "request line has no target or no version", method: method))
        }
        let versionBytes = UnsafeBufferPointer(rebasing: line[(targetEnd + 1)...])
        guard let version = Self.version(versionBytes) else {
            return .failure(HTTPRequestError(.malformedRequestLine, "malformed HTTP version", method: method))
        }
        let targetBytes = UnsafeBufferPointer(rebasing: line[targetStart..<targetEnd])
        let target: String
        switch Self.originForm(ofAbsolute: targetBytes) {
        case .failure(var error):
            error.method = method
            return .failure(error)
        case .success(let origin):
            if let problem = origin.withUnsafeBufferPointer(Self.targetProblem) {
                return .failure(HTTPRequestError(.invalidTarget, problem, method: method))
            }
            target = String(decoding: origin, as: UTF8.self)
        case nil:
            if let problem = Self.targetProblem(targetBytes) {
                return .failure(HTTPRequestError(.invalidTarget, problem, method: method))
            }
            target = String(decoding: targetBytes, as: UTF8.self)
        }
        guard version == .http1_1 || version == .http1_0 else {
            return .failure(HTTPRequestError(.unsupportedVersion, "\(version) is not supported", method: method, target: target))
        }
        return .success(RequestLine(method: method, target: normalizingPercentEncodedUnreserved(target), version: version))
    }

    /// Decodes the percent-encoded unreserved characters (ALPHA, DIGIT, `-`, `.`, `_`, `~`) of the path, as
    /// RFC 3986 §6.2.2.2 says they are equivalent to, and as nginx does before it matches a location: `/acme%2Ejson.signed`
    /// is `/acme.json.signed`. Reserved characters stay encoded, so `%2F` never becomes a path separator, and the
    /// query is left as sent. A target without `%` is returned as it is, without a copy.
    static func normalizingPercentEncodedUnreserved(_ target: String) -> String {
        let utf8 = target.utf8
        guard let firstPercent = utf8.firstIndex(of: UInt8(ascii: "%")) else { return target }
        let pathEnd = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        guard firstPercent < pathEnd else { return target }
        var bytes = Array(utf8[..<firstPercent])
        bytes.reserveCapacity(utf8.count)
        var index = firstPercent
        while index < pathEnd {
            let byte = utf8[index]
            // The target was checked: every `%` is followed by two hex digits.
            if byte == UInt8(ascii: "%") {
                let high = utf8[utf8.index(index, offsetBy: 1)], low = utf8[utf8.index(index, offsetBy: 2)]
                let decoded = hexValue(high) << 4 | hexValue(low)
                if isUnreserved(decoded) {
                    bytes.append(decoded)
                } else {
                    bytes.append(contentsOf: [byte, high, low])
                }
                index = utf8.index(index, offsetBy: 3)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        bytes.append(contentsOf: utf8[pathEnd...])
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: byte - UInt8(ascii: "A") + 10
        }
    }

    /// `unreserved` of RFC 3986 §2.3.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        HTTPSyntax.isAlpha(byte) || HTTPSyntax.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
    }

    private static func method(_ token: UnsafeBufferPointer<UInt8>) -> HTTPMethod {
        if token.elementsEqual("GET".utf8) { return .get }
        if token.elementsEqual("HEAD".utf8) { return .head }
        return .other(String(decoding: token, as: UTF8.self))
    }

    /// `HTTP-version = "HTTP" "/" DIGIT "." DIGIT`, case-sensitive (RFC 9112 §2.3).
    private static func version(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPVersion? {
        guard bytes.count == 8, bytes[0..<5].elementsEqual("HTTP/".utf8), HTTPSyntax.isDigit(bytes[5]),
              bytes[6] == UInt8(ascii: "."), HTTPSyntax.isDigit(bytes[7])
        else { return nil }
        return HTTPVersion(major: Int(bytes[5] - UInt8(ascii: "0")), minor: Int(bytes[7] - UInt8(ascii: "0")))
    }

    /// Why `target` is not an acceptable origin-form target, or nil. Authority-form and asterisk-form are refused
    /// (this server implements neither CONNECT nor OPTIONS; absolute-form is reduced to origin-form first), as are
    /// bytes outside RFC 3986 — including non-ASCII, NUL and `#` — and malformed percent-encoding.
    private static func targetProblem(_ target: UnsafeBufferPointer<UInt8>) -> String? {
        guard target[0] == UInt8(ascii: "/") else {
            return target[0] == UInt8(ascii: "*") ? "asterisk-form target" : "target is not origin-form"
        }
        var index = 0
        while index < target.count {
            let byte = target[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < target.count, HTTPSyntax.isHexDigit(target[index + 1]),
                      HTTPSyntax.isHexDigit(target[index + 2])
                else { return "malformed percent-encoding in target" }
                index += 3
                continue
            }
            guard HTTPSyntax.isTargetCharacter(byte) else { return "invalid byte 0x\(String(byte, radix: 16)) in target" }
            index += 1
        }
        return nil
    }
}

/// What the parser has learned from the field lines of the current request.
struct FieldSummary: Sendable {
    var count = 0
    var hostCount = 0
    var connection = ConnectionOptions()
    /// The announced content length; only ever above 0 when content is accepted.
    var contentLength: Int?
    /// `Transfer-Encoding: chunked`; only ever set when content is accepted.
    var chunked = false
    /// `Expect: 100-continue` (RFC 9110 §10.1.1).
    var expectsContinue = false
    /// ``HTTPLimits/maxContentBytes``: 0 refuses any content.
    let maxContentBytes: Int

    init(maxContentBytes: Int) {
        self.maxContentBytes = maxContentBytes
    }

    /// Validates one field line (without CRLF) and records the fields that affect framing and routing.
    /// Returns the error that rejects the request, or nil.
    mutating func addFieldLine(_ line: UnsafeBufferPointer<UInt8>) -> HTTPRequestError? {
        let name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>
        switch Self.splitFieldLine(line) {
        case .failure(let error): return error
        case .success(let parts): (name, value) = parts
        }
        switch name.count {
        case 4 where HTTPSyntax.equalsLowercase(name, "host"):
            hostCount += 1
            if hostCount > 1 { return HTTPRequestError(.invalidHost, "more than one Host field") }
            if !value.allSatisfy(HTTPSyntax.isHostCharacter) { return HTTPRequestError(.invalidHost, "invalid Host value") }
        case 6 where HTTPSyntax.equalsLowercase(name, "expect"):
            // RFC 9110 §10.1.1: the only expectation defined; others are ignored rather than answered 417.
            if HTTPSyntax.equalsLowercase(value, "100-continue") { expectsContinue = true }
        case 10 where HTTPSyntax.equalsLowercase(name, "connection"):
            connection.add(value)
        case 14 where HTTPSyntax.equalsLowercase(name, "content-length"):
            guard maxContentBytes > 0 else {
                guard !value.isEmpty, value.allSatisfy(HTTPSyntax.isDigit) else {
                    return HTTPRequestError(.contentNotAllowed, "malformed Content-Length")
                }
                if value.contains(where: { $0 != UInt8(ascii: "0") }) {
                    return HTTPRequestError(.contentNotAllowed, "request content is not accepted")
                }
                return nil
            }
            return addContentLength(value)
        case 17 where HTTPSyntax.equalsLowercase(name, "transfer-encoding"):
            guard maxContentBytes > 0 else { return HTTPRequestError(.contentNotAllowed, "Transfer-Encoding is not accepted") }
            return addTransferEncoding(value)
        default:
            break
        }
        return nil
    }

    /// Why a field line (without CRLF) is not `field-name ":" OWS field-value OWS` (RFC 9112 §5), or nil.
    static func fieldLineProblem(_ line: UnsafeBufferPointer<UInt8>) -> String? {
        if case .failure(let error) = splitFieldLine(line) { return error.reason }
        return nil
    }

    /// The name and the trimmed value of a valid field line. Obs-fold, whitespace before the colon, non-token
    /// names and CTL/NUL in values are refused (RFC 9112 §5.1, §5.2; RFC 9110 §5.5).
    @inline(__always)
    private static func splitFieldLine(_ line: UnsafeBufferPointer<UInt8>)
        -> Swift.Result<(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>), HTTPRequestError> {
        if HTTPSyntax.isWhitespace(line[0]) {
            return .failure(HTTPRequestError(.malformedHeader, "obsolete line folding"))
        }
        var colon = 0
        while colon < line.count && HTTPSyntax.isTokenCharacter(line[colon]) { colon += 1 }
        guard colon < line.count, line[colon] == HTTPSyntax.colon else {
            if colon < line.count && HTTPSyntax.isWhitespace(line[colon]) {
                return .failure(HTTPRequestError(.malformedHeader, "whitespace between field name and colon"))
            }
            return .failure(HTTPRequestError(.malformedHeader, "invalid character in field name"))
        }
        guard colon > 0 else { return .failure(HTTPRequestError(.malformedHeader, "empty field name")) }
        var valueStart = colon + 1
        var valueEnd = line.count
        for index in valueStart..<valueEnd where !HTTPSyntax.isFieldValueCharacter(line[index]) {
            return .failure(HTTPRequestError(.malformedHeader, "invalid byte 0x\(String(line[index], radix: 16)) in field value"))
        }
        while valueStart < valueEnd && HTTPSyntax.isWhitespace(line[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart && HTTPSyntax.isWhitespace(line[valueEnd - 1]) { valueEnd -= 1 }
        return .success((UnsafeBufferPointer(rebasing: line[0..<colon]), UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd])))
    }

    private static let bothFramings = HTTPRequestError(
        .invalidContentLength, "both Content-Length and Transfer-Encoding are present, so the framing is ambiguous")

    /// Records a `Transfer-Encoding` on a listener that accepts content: exactly one field whose only coding is
    /// `chunked`. RFC 9112 §6.3 rule 4: chunked not last leaves the length unknown (400); a coding this server
    /// does not implement is answered 501 (§6.1); together with `Content-Length` (rule 3) or repeated, the
    /// framing is ambiguous and refused rather than guessed, as request smuggling needs exactly that.
    private mutating func addTransferEncoding(_ value: UnsafeBufferPointer<UInt8>) -> HTTPRequestError? {
        guard !chunked else { return HTTPRequestError(.invalidContentLength, "more than one Transfer-Encoding field") }
        guard contentLength == nil else { return Self.bothFramings }
        var last = value.count
        while last > 0 && value[last - 1] != UInt8(ascii: ",") { last -= 1 }
        var first = last
        while first < value.count && HTTPSyntax.isWhitespace(value[first]) { first += 1 }
        guard HTTPSyntax.equalsLowercase(UnsafeBufferPointer(rebasing: value[first...]), "chunked") else {
            return HTTPRequestError(.invalidContentLength, "Transfer-Encoding does not end in chunked, so the content length is unknown")
        }
        guard last == 0 else {
            return HTTPRequestError(.unsupportedTransferCoding, "only the chunked transfer coding is implemented")
        }
        chunked = true
        return nil
    }

    /// Records a `Content-Length` on a listener that accepts content: one field with one decimal number, at most
    /// ``maxContentBytes`` (RFC 9112 §6.3 rules 5 and 6: a list or a repeated field would leave framing ambiguous).
    private mutating func addContentLength(_ value: UnsafeBufferPointer<UInt8>) -> HTTPRequestError? {
        guard !chunked else { return Self.bothFramings }
        guard contentLength == nil else {
            return HTTPRequestError(.invalidContentLength, "more than one Content-Length field")
        }
        guard !value.isEmpty, value.allSatisfy(HTTPSyntax.isDigit) else {
            return HTTPRequestError(.invalidContentLength, "malformed Content-Length")
        }
        let significant = value.drop { $0 == UInt8(ascii: "0") }
        // More digits than the limit has cannot be within it, and must not overflow an Int.
        guard significant.count <= String(maxContentBytes).utf8.count else {
            return HTTPRequestError(.contentTooLarge, "content larger than \(maxContentBytes) bytes")
        }
        let length = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard length <= maxContentBytes else {
            return HTTPRequestError(.contentTooLarge, "content of \(length) bytes is larger than \(maxContentBytes) bytes")
        }
        contentLength = length
        return nil
    }
}
