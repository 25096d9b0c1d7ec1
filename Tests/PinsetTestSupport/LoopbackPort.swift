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
    ///
    /// Drawn at random from below the kernel's ephemeral range, not with `bind(0)`: a port the kernel hands out is
    /// one it also hands to outgoing connections as their source port, and the suites make thousands (curl, report
    /// floods, monitors), any of which could take it before the child binds it.
    public static func unused() throws -> Int {
        let ephemeralStart = Self.ephemeralRangeStart()
        let candidates = max(1_024, ephemeralStart - 12_000)..<ephemeralStart
        for _ in 0..<64 where !candidates.isEmpty {
            if let (fd, port) = try? bound(port: Int.random(in: candidates)) {
                close(fd)
                return port
            }
        }
        let (fd, port) = try bound(port: 0)
        close(fd)
        return port
    }

    /// The first port of the range the kernel draws source ports from (Linux: `ip_local_port_range`; Darwin's
    /// default range starts at 49152).
    private static func ephemeralRangeStart() -> Int {
        #if os(Linux)
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
        #else
        return 49_152
        #endif
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

    /// A TCP socket from the loopback address `source` (any of 127.0.0.0/8, which Linux routes to the loopback
    /// interface, or an IPv6 address of the host, so a test can act as several clients) connected to
    /// `destination`:`port`, with `readTimeout` on every read (none when nil) and `writeTimeout` on every write and on
    /// the connect; the caller closes it.
    public static func connect(
        to port: Int, at destination: String = "127.0.0.1", from source: String = "127.0.0.1",
        readTimeout: Duration? = .seconds(5), writeTimeout: Duration = .seconds(5)
    ) throws -> Int32 {
        let isIPv6 = destination.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, SystemCall.streamSocket, 0)
        guard fd >= 0 else { throw ConnectFailed(step: "socket", errno: errno) }
        for (option, timeout) in [(SO_RCVTIMEO, readTimeout), (SO_SNDTIMEO, writeTimeout)] {
            guard let (seconds, attoseconds) = timeout?.components else { continue }
            var value = timeval(tv_sec: .init(seconds), tv_usec: .init(attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        let failedStep: String?
        if isIPv6 {
            var local = sockaddr_in6()
            local.sin6_family = sa_family_t(AF_INET6)
            inet_pton(AF_INET6, source, &local.sin6_addr)
            var remote = sockaddr_in6()
            remote.sin6_family = sa_family_t(AF_INET6)
            remote.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, destination, &remote.sin6_addr)
            failedStep = bindAndConnect(fd, &local, &remote)
        } else {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = UInt16(port).bigEndian
            remote.sin_addr.s_addr = inet_addr(destination)
            failedStep = bindAndConnect(fd, &local, &remote)
        }
        if let failedStep {
            let failure = ConnectFailed(step: failedStep == "bind" ? "bind to \(source)" : "connect to \(destination) port \(port)", errno: errno)
            close(fd)
            throw failure
        }
        return fd
    }

    public struct ConnectFailed: Error, CustomStringConvertible {
        public let step: String
        public let errno: Int32
        public var description: String { "\(step): \(String(cString: strerror(errno)))" }
    }

    /// Binds `fd` to `local` and connects it to `remote`; the step that failed, or nil.
    private static func bindAndConnect<Address>(_ fd: Int32, _ local: inout Address, _ remote: inout Address) -> String? {
        let size = socklen_t(MemoryLayout<Address>.size)
        guard withUnsafePointer(to: &local, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }) == 0 else { return "bind" }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SystemCall.connect(fd, $0, size) } }
        return connected == 0 ? nil : "connect"
    }

    private static func bound(port: Int) throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, SystemCall.streamSocket, 0)
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
