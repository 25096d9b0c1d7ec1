import Glibc

/// The POSIX socket calls of the transport, kept in one place. Linux only (`accept4`, `SOCK_NONBLOCK`,
/// `MSG_NOSIGNAL`).
enum TransportSocket {
    /// Flags for every send: never raise SIGPIPE on a peer that went away; report `EPIPE` instead.
    static let sendFlags = Int32(MSG_NOSIGNAL)

    /// Creates a non-blocking, close-on-exec socket bound to `host:port` and listening.
    /// Returns the descriptor and the bound port (the ephemeral one when `port` is 0).
    static func listen(host: String, port: UInt16, backlog: Int32) throws(SocketServerError) -> (fd: Int32, port: UInt16) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw SocketServerError(.addressResolution, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(results) }
        let address = first.pointee
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.ai_family, type, 0)
        guard fd >= 0 else { throw .systemCall(.socketFailed, "socket()", errno: errno) }
        do throws(SocketServerError) {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if bind(fd, address.ai_addr, address.ai_addrlen) != 0 {
                let code = errno
                throw SocketServerError.systemCall(code == EADDRINUSE ? .addressInUse : .bindFailed,
                                                   "cannot bind \(host):\(port)", errno: code)
            }
            if Glibc.listen(fd, backlog) != 0 { throw SocketServerError.systemCall(.socketFailed, "listen()", errno: errno) }
            return (fd, try boundPort(fd))
        } catch {
            close(fd)
            throw error
        }
    }

    /// Accepts a connection as a non-blocking, close-on-exec descriptor in one call where possible.
    ///
    /// Swift's Glibc module does not export `accept4` (it is a GNU extension), so it is looked up once with
    /// `dlsym`; if that ever fails, `accept` plus two `fcntl` calls give the same result.
    static func accept(_ listener: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        if let accept4 = accept4Function {
            return accept4(listener, address, length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
        }
        let fd = Glibc.accept(listener, address, length)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return fd
    }

    private typealias Accept4 = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32

    private static let accept4Function: Accept4? = dlsym(nil, "accept4").map { unsafeBitCast($0, to: Accept4.self) }

    /// Whether the peer has sent bytes not yet read: a non-blocking one-byte peek. Closing a socket with unread
    /// bytes makes the kernel send a reset, which can destroy the response still in flight; an end of input
    /// (the peer closed its side) is not such a byte. A failed peek answers true, so the caller lingers.
    static func hasUnreadInput(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let peeked = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return peeked > 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Disables Nagle's algorithm: responses are written whole, so delaying them only adds latency.
    static func setNoDelay(_ fd: Int32) {
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    /// The IP address (without port) in `storage`, for access logs.
    static func describeAddress(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = Int32(storage.ss_family)
        let converted: UnsafePointer<CChar>? = withUnsafePointer(to: &storage) { pointer in
            switch family {
            case AF_INET:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var ip = address.pointee.sin_addr
                    return inet_ntop(AF_INET, &ip, &text, socklen_t(text.count))
                }
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var ip = address.pointee.sin6_addr
                    // An IPv4 client of a dual-stack socket arrives as ::ffff:a.b.c.d (RFC 4291 §2.5.5.2); it is
                    // the same client as a.b.c.d on an IPv4 socket or in a PROXY header, so it gets the same key.
                    let isV4Mapped = withUnsafeBytes(of: &ip) { bytes in
                        bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                    }
                    if isV4Mapped {
                        return withUnsafeBytes(of: &ip) { bytes in
                            var v4 = in_addr()
                            withUnsafeMutableBytes(of: &v4) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[12..<16])) }
                            return inet_ntop(AF_INET, &v4, &text, socklen_t(text.count))
                        }
                    }
                    return inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count))
                }
            default:
                nil
            }
        }
        guard converted != nil else { return "-" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func boundPort(_ fd: Int32) throws(SocketServerError) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw .systemCall(.socketFailed, "getsockname()", errno: errno) }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            switch family {
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            default:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        }
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SocketServerError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .systemCall(.socketFailed, "setsockopt(\(name))", errno: errno)
        }
    }
}
