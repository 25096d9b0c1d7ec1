#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Loopback ports for child processes that cannot report the port they bound.
public enum LoopbackPort {
    public struct Unavailable: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "could not listen on 127.0.0.1: \(String(cString: strerror(errno)))" }
    }

    /// A port nothing listens on right now. Another process may take it before the child binds it, so callers
    /// that can detect "address in use" retry with a new one.
    public static func unused() throws -> Int {
        let (fd, port) = try bound(port: 0)
        close(fd)
        return port
    }

    /// A socket listening on 127.0.0.1:`port` (0: any free port) that never accepts: the kernel completes
    /// connections into its backlog and nothing answers, like a server behind a partition or another program
    /// holding the port. The caller closes the descriptor.
    public static func listening(port: Int = 0, backlog: Int32 = 8) throws -> (descriptor: Int32, port: Int) {
        let (fd, bound) = try bound(port: port)
        guard listen(fd, backlog) == 0 else {
            let error = errno
            close(fd)
            throw Unavailable(errno: error)
        }
        return (fd, bound)
    }

    private static func bound(port: Int) throws -> (descriptor: Int32, port: Int) {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Unavailable(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        let named = bound == 0
            ? withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            : -1
        guard named == 0 else {
            let error = errno
            close(fd)
            throw Unavailable(errno: error)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
