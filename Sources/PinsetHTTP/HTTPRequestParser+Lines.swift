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
        return .success(RequestLine(method: method, target: target, version: version))
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
    /// ``HTTPLimits/maxContentBytes``: 0 refuses any content.
    let maxContentBytes: Int

    init(maxContentBytes: Int) {
        self.maxContentBytes = maxContentBytes
    }

    /// Validates one field line (without CRLF) and records the fields that affect framing and routing.
    /// Returns the error that rejects the request, or nil.
    mutating func addFieldLine(_ line: UnsafeBufferPointer<UInt8>) -> HTTPRequestError? {
        if HTTPSyntax.isWhitespace(line[0]) {
            return HTTPRequestError(.malformedHeader, "obsolete line folding")
        }
        var colon = 0
        while colon < line.count && HTTPSyntax.isTokenCharacter(line[colon]) { colon += 1 }
        guard colon < line.count, line[colon] == HTTPSyntax.colon else {
            if colon < line.count && HTTPSyntax.isWhitespace(line[colon]) {
                return HTTPRequestError(.malformedHeader, "whitespace between field name and colon")
            }
            return HTTPRequestError(.malformedHeader, "invalid character in field name")
        }
        guard colon > 0 else { return HTTPRequestError(.malformedHeader, "empty field name") }
        var valueStart = colon + 1
        var valueEnd = line.count
        for index in valueStart..<valueEnd where !HTTPSyntax.isFieldValueCharacter(line[index]) {
            return HTTPRequestError(.malformedHeader, "invalid byte 0x\(String(line[index], radix: 16)) in field value")
        }
        while valueStart < valueEnd && HTTPSyntax.isWhitespace(line[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart && HTTPSyntax.isWhitespace(line[valueEnd - 1]) { valueEnd -= 1 }
        let name = UnsafeBufferPointer(rebasing: line[0..<colon])
        let value = UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd])
        switch name.count {
        case 4 where HTTPSyntax.equalsLowercase(name, "host"):
            hostCount += 1
            if hostCount > 1 { return HTTPRequestError(.invalidHost, "more than one Host field") }
            if !value.allSatisfy(HTTPSyntax.isHostCharacter) { return HTTPRequestError(.invalidHost, "invalid Host value") }
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
            if maxContentBytes > 0 {
                return HTTPRequestError(.lengthRequired, "Transfer-Encoding is not accepted; send the content with Content-Length")
            }
            return HTTPRequestError(.contentNotAllowed, "Transfer-Encoding is not accepted")
        default:
            break
        }
        return nil
    }

    /// Records a `Content-Length` on a listener that accepts content: one field with one decimal number, at most
    /// ``maxContentBytes`` (RFC 9112 §6.3 rules 5 and 6: a list or a repeated field would leave framing ambiguous).
    private mutating func addContentLength(_ value: UnsafeBufferPointer<UInt8>) -> HTTPRequestError? {
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
