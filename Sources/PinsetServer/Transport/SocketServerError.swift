#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why ``SocketServer/start()`` failed. Equality compares ``code`` only.
public struct SocketServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// `host` is neither an address literal nor a resolvable name.
        case addressResolution
        /// Another socket already listens on the address (`EADDRINUSE`).
        case addressInUse
        /// The address is not available on this machine, or binding it is not permitted.
        case bindFailed
        /// `socket(2)`, `setsockopt(2)` or `listen(2)` failed.
        case socketFailed
        /// `start()` was called twice, or after `shutdown`.
        case alreadyStarted
        /// The configured ``SocketTransport`` does not exist on this platform (epoll outside Linux).
        case transportUnavailable
    }

    public var code: Code
    public var reason: String
    /// The `errno` of the failed call, when there was one.
    public var errno: Int32?

    public init(_ code: Code, _ reason: String, errno: Int32? = nil) {
        self.code = code
        self.reason = reason
        self.errno = errno
    }

    /// An error for the system call that just failed, with its `errno` text.
    static func systemCall(_ code: Code, _ what: String, errno: Int32) -> SocketServerError {
        SocketServerError(code, "\(what): \(String(cString: strerror(errno))) (errno \(errno))", errno: errno)
    }

    public var description: String { reason }

    public static func == (lhs: SocketServerError, rhs: SocketServerError) -> Bool { lhs.code == rhs.code }
}
