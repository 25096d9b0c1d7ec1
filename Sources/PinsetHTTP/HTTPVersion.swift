/// An HTTP protocol version as sent in the request line (RFC 9112 §2.3).
///
/// Only HTTP/1.0 and HTTP/1.1 are accepted; the parser answers any other well-formed version with
/// `505 HTTP Version Not Supported`.
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }
}
