#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls test clients make under names that a test type's own `send`, `connect` or `open` would shadow,
/// and the one constant whose type differs between Glibc and Darwin: written once here, for both platforms.
public enum SystemCall {
    /// `SOCK_STREAM` as `socket(2)` takes it: an enum case on Glibc, an `Int32` on Darwin.
    public static var streamSocket: Int32 {
        #if os(Linux)
        Int32(SOCK_STREAM.rawValue)
        #else
        SOCK_STREAM
        #endif
    }

    /// `send(2)` that never raises SIGPIPE, so that a server that answers early and closes cannot end the test run:
    /// `MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on the socket on Darwin.
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, flags: Int32 = 0) -> Int {
        #if canImport(Glibc)
        return Glibc.send(fd, bytes.baseAddress, bytes.count, flags | Int32(MSG_NOSIGNAL))
        #else
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        return Darwin.send(fd, bytes.baseAddress, bytes.count, flags)
        #endif
    }

    public static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.connect(fd, address, length)
        #else
        Darwin.connect(fd, address, length)
        #endif
    }

    public static func open(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #else
        Darwin.open(path, flags)
        #endif
    }
}
