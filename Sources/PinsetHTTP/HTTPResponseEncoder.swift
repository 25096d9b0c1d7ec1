/// Serializes responses into an ``HTTPOutboundBuffer`` (RFC 9112 §4, §6).
///
/// Layout: status line, `Date`, the handler's fields, `Content-Length`, then `Connection` when needed, the empty
/// line and the body. The status line always says `HTTP/1.1`, also to HTTP/1.0 clients (RFC 9110 §6.2).
/// `Content-Length` is always sent except for 1xx, 204 (RFC 9110 §8.6 forbids it) and 304. RFC 9110 §8.6 would
/// allow a 304 to announce the 200's length, but clients that frame every response by `Content-Length` (those
/// built on http_parser, such as wrk) then wait for body bytes that never come, so 304s are sent the way nginx
/// sends them: validators and caching fields only, no `Content-Length`, no body (RFC 9112 §6.3 rule 1).
/// Not thread-safe; a value belongs to one connection.
public struct HTTPResponseEncoder: Sendable {
    /// The `Connection` field to send.
    public enum ConnectionField: Sendable {
        /// None: the HTTP/1.1 default, a persistent connection.
        case none
        /// `Connection: keep-alive`, which an HTTP/1.0 client needs to keep the connection open.
        case keepAlive
        /// `Connection: close`: the server closes after this response (RFC 9112 §9.6).
        case close
    }

    /// What was sent, for access logs.
    public struct Summary: Sendable, Equatable {
        public var status: HTTPStatus
        /// Body bytes actually queued (0 for HEAD and bodiless statuses).
        public var bodyBytes: Int

        public init(status: HTTPStatus, bodyBytes: Int) {
            self.status = status
            self.bodyBytes = bodyBytes
        }
    }

    private var dateCache = HTTPDateCache()

    public init() {}

    /// Appends `response` to `output`. When `omitBody` is set (a `HEAD` request) the body is not written but
    /// `Content-Length` still announces its size (RFC 9110 §9.3.2).
    @discardableResult
    public mutating func encode(
        _ response: HTTPResponse,
        omitBody: Bool,
        connection: ConnectionField,
        unixSeconds: Int64,
        into output: inout HTTPOutboundBuffer
    ) -> Summary {
        guard Self.isValid(response) else {
            return encode(.error(.internalServerError), omitBody: omitBody, connection: connection,
                          unixSeconds: unixSeconds, into: &output)
        }
        let date = dateCache.bytes(unixSeconds: unixSeconds)
        let status = response.status
        let bodyLength = response.body.count
        let contentLength: Int? = status.forbidsContent ? nil : bodyLength
        let sendsBody = !omitBody && !status.forbidsContent && bodyLength > 0
        output.appendOwned { bytes in
            Self.appendStatusLine(status, to: &bytes)
            Self.append("Date: ", to: &bytes)
            bytes.append(contentsOf: date)
            Self.append("\r\n", to: &bytes)
            for (name, value) in response.headers where !Self.isFramingField(name) {
                bytes.append(contentsOf: name.utf8)
                Self.append(": ", to: &bytes)
                bytes.append(contentsOf: value.utf8)
                Self.append("\r\n", to: &bytes)
            }
            if let contentLength {
                Self.append("Content-Length: ", to: &bytes)
                Self.appendDecimal(contentLength, to: &bytes)
                Self.append("\r\n", to: &bytes)
            }
            switch connection {
            case .none: break
            case .keepAlive: Self.append("Connection: keep-alive\r\n", to: &bytes)
            case .close: Self.append("Connection: close\r\n", to: &bytes)
            }
            Self.append("\r\n", to: &bytes)
        }
        if sendsBody { output.append(response.body) }
        return Summary(status: status, bodyBytes: sendsBody ? bodyLength : 0)
    }

    /// The complete bytes of `response` without a `Date` field, for canned replies sent outside a connection's
    /// state machine (RFC 9110 §6.6.1 makes `Date` optional in 5xx responses). Always `Connection: close`.
    public static func cannedResponse(_ response: HTTPResponse) -> [UInt8] {
        var bytes: [UInt8] = []
        appendStatusLine(response.status, to: &bytes)
        for (name, value) in response.headers where !isFramingField(name) {
            bytes.append(contentsOf: "\(name): \(value)\r\n".utf8)
        }
        bytes.append(contentsOf: "Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n".utf8)
        bytes.append(contentsOf: response.body)
        return bytes
    }

    private static func appendStatusLine(_ status: HTTPStatus, to bytes: inout [UInt8]) {
        append("HTTP/1.1 ", to: &bytes)
        appendDecimal(status.code, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: status.reason.utf8)
        append("\r\n", to: &bytes)
    }

    @inline(__always)
    private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        precondition(value >= 0, "negative number in a response head")
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Fields whose values the encoder owns because they frame the message or describe the connection.
    private static func isFramingField(_ name: String) -> Bool {
        let utf8 = name.utf8
        switch utf8.count {
        case 4: return equalsIgnoringCase(utf8, "date")
        case 10: return equalsIgnoringCase(utf8, "connection")
        case 14: return equalsIgnoringCase(utf8, "content-length")
        case 17: return equalsIgnoringCase(utf8, "transfer-encoding")
        default: return false
        }
    }

    private static func equalsIgnoringCase(_ utf8: String.UTF8View, _ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { expected in
            zip(utf8, expected).allSatisfy { $0 | 0x20 == $1 }
        }
    }

    /// Whether the status is a three-digit code with a clean reason phrase (RFC 9112 §4) and every handler field
    /// has a token name and a value free of CR, LF, NUL and other controls.
    private static func isValid(_ response: HTTPResponse) -> Bool {
        guard (100...999).contains(response.status.code),
              response.status.reason.utf8.allSatisfy(HTTPSyntax.isFieldValueCharacter)
        else { return false }
        for (name, value) in response.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPSyntax.isTokenCharacter),
                  value.utf8.allSatisfy(HTTPSyntax.isFieldValueCharacter)
            else { return false }
        }
        return true
    }
}
