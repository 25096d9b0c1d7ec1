#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Loopback ports for child processes that cannot report the port they bound.
public enum LoopbackPort {
    public struct Unavailable: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "could not bind 127.0.0.1:0 to find a free port: \(String(cString: strerror(errno)))" }
    }

    /// A port nothing listens on right now. Another process may take it before the child binds it, so callers
    /// that can detect "address in use" retry with a new one.
    public static func unused() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Unavailable(errno: errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw Unavailable(errno: errno) }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard named == 0 else { throw Unavailable(errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
