/// Why a request was refused by the protocol layer, and which status answers it.
///
/// Every such error ends the connection: after a framing or syntax problem the server cannot know where the next
/// request would start (RFC 9112 §9.6), so it answers once with `Connection: close` and stops reading. Equality
/// compares ``code`` only; ``reason`` is a human-readable detail for logs.
public struct HTTPRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// The request line is not `method SP request-target SP HTTP-version` (RFC 9112 §3).
        case malformedRequestLine
        /// The request target is not an origin-form path with an optional query (RFC 9112 §3.2.1).
        case invalidTarget
        /// The request line exceeds ``HTTPLimits/maxRequestLineBytes``.
        case requestLineTooLong
        /// A well-formed version other than HTTP/1.0 or HTTP/1.1.
        case unsupportedVersion
        /// A line not terminated by CRLF: a bare LF or a bare CR (RFC 9112 §2.2).
        case invalidLineTerminator
        /// A field line that is not `field-name ":" OWS field-value OWS` (RFC 9112 §5).
        case malformedHeader
        /// The header section exceeds ``HTTPLimits/maxHeaderBytes``.
        case headerSectionTooLarge
        /// More field lines than ``HTTPLimits/maxHeaderCount``.
        case tooManyHeaders
        /// An HTTP/1.1 request without `Host`, more than one `Host`, or an invalid `Host` (RFC 9112 §3.2).
        case invalidHost
        /// The request announces content (`Transfer-Encoding`, or a `Content-Length` other than 0) on a listener
        /// that accepts none.
        case contentNotAllowed
        /// On a listener that accepts content: a `Content-Length` that is not one decimal number, or framing that
        /// is ambiguous: both `Content-Length` and `Transfer-Encoding`, either repeated, chunked not the last
        /// coding, or `Transfer-Encoding` in HTTP/1.0 (RFC 9112 §6.1, §6.3).
        case invalidContentLength
        /// On a listener that accepts content: an announced length above ``HTTPLimits/maxContentBytes``.
        case contentTooLarge
        /// On a listener that accepts content: chunked content whose framing is malformed (RFC 9112 §7.1).
        case malformedChunk
        /// On a listener that accepts content: a transfer coding other than `chunked` (RFC 9112 §6.1).
        case unsupportedTransferCoding
        /// A method other than GET or HEAD (or POST where content is accepted).
        case methodNotAllowed
        /// The request head did not arrive in time.
        case requestTimeout
    }

    public var code: Code
    public var reason: String
    /// The method, when the request line was parsed before the error; used for logging and to omit the body of an
    /// error answered to `HEAD`.
    public var method: HTTPMethod?
    /// The request target, when the request line was parsed before the error.
    public var target: String?

    public init(_ code: Code, _ reason: String, method: HTTPMethod? = nil, target: String? = nil) {
        self.code = code
        self.reason = reason
        self.method = method
        self.target = target
    }

    /// The status that answers this error.
    public var status: HTTPStatus {
        switch code {
        case .malformedRequestLine, .invalidTarget, .invalidLineTerminator, .malformedHeader, .invalidHost,
             .contentNotAllowed, .invalidContentLength, .malformedChunk:
            .badRequest
        case .contentTooLarge: .contentTooLarge
        case .unsupportedTransferCoding: .notImplemented
        case .requestLineTooLong: .uriTooLong
        case .unsupportedVersion: .httpVersionNotSupported
        case .headerSectionTooLarge, .tooManyHeaders: .requestHeaderFieldsTooLarge
        case .methodNotAllowed: .methodNotAllowed
        case .requestTimeout: .requestTimeout
        }
    }

    public var description: String { "\(status.code) \(code): \(reason)" }

    public static func == (lhs: HTTPRequestError, rhs: HTTPRequestError) -> Bool { lhs.code == rhs.code }
}
