/// A request method (RFC 9110 §9).
///
/// The server implements `GET` and `HEAD`, and `POST` only on a listener that accepts content (see
/// ``HTTPLimits/maxContentBytes``); every other syntactically valid method token is kept verbatim in ``other(_:)``
/// so that it can be logged and answered with `405 Method Not Allowed`. Methods are case-sensitive
/// (RFC 9110 §9.1), so `get` is `.other("get")`.
public enum HTTPMethod: Sendable, Hashable, CustomStringConvertible {
    case get
    case head
    case other(String)

    /// `POST`, which only a listener that accepts content lets through.
    public static let post = HTTPMethod.other("POST")

    /// The method token as it appears on the wire.
    public var rawValue: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .other(let token): token
        }
    }

    public var description: String { rawValue }
}
