#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX socket calls of the transport, kept in one place, with what differs between Linux and Darwin:
/// Linux creates and accepts sockets non-blocking and close-on-exec in one call (`SOCK_NONBLOCK`, `accept4`) and
/// suppresses `SIGPIPE` per send (`MSG_NOSIGNAL`); Darwin has neither, so it sets the flags with `fcntl` and
/// suppresses `SIGPIPE` per socket (`SO_NOSIGPIPE`).
enum TransportSocket {
    #if os(Linux)
    /// Flags for every send: never raise SIGPIPE on a peer that went away; report `EPIPE` instead.
    static let sendFlags = Int32(MSG_NOSIGNAL)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    /// Every socket carries `SO_NOSIGPIPE` instead (see ``accept(_:_:_:)``).
    static let sendFlags: Int32 = 0
    private static let streamType = SOCK_STREAM
    #endif

    /// Creates a non-blocking, close-on-exec socket bound to `host:port` and listening.
    /// Returns the descriptor and the bound port (the ephemeral one when `port` is 0).
    static func listen(host: String, port: UInt16, backlog: Int32) throws(SocketServerError) -> (fd: Int32, port: UInt16) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw SocketServerError(.addressResolution, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(results) }
        let address = first.pointee
        #if os(Linux)
        let fd = socket(address.ai_family, streamType | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(address.ai_family, streamType, 0)
        #endif
        guard fd >= 0 else { throw .systemCall(.socketFailed, "socket()", errno: errno) }
        do throws(SocketServerError) {
            #if !os(Linux)
            makeNonBlockingAndCloseOnExec(fd)
            #endif
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if bind(fd, address.ai_addr, address.ai_addrlen) != 0 {
                let code = errno
                throw SocketServerError.systemCall(code == EADDRINUSE ? .addressInUse : .bindFailed,
                                                   "cannot bind \(host):\(port)", errno: code)
            }
            if systemListen(fd, backlog) != 0 { throw SocketServerError.systemCall(.socketFailed, "listen()", errno: errno) }
            return (fd, try boundPort(fd))
        } catch {
            close(fd)
            throw error
        }
    }

    /// Accepts a connection as a non-blocking, close-on-exec descriptor in one call where possible.
    ///
    /// Swift's Glibc module does not export `accept4` (it is a GNU extension), so it is looked up once with
    /// `dlsym`; if that ever fails, and on Darwin, which has no `accept4`, `accept` plus two `fcntl` calls give the
    /// same result. On Darwin the socket also gets `SO_NOSIGPIPE`, which Linux does per send.
    static func accept(_ listener: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        #if os(Linux)
        if let accept4 = accept4Function {
            return accept4(listener, address, length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
        }
        #endif
        let fd = systemAccept(listener, address, length)
        if fd >= 0 {
            makeNonBlockingAndCloseOnExec(fd)
            #if !os(Linux)
            try? setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
            #endif
        }
        return fd
    }

    #if os(Linux)
    private typealias Accept4 = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32

    private static let accept4Function: Accept4? = dlsym(nil, "accept4").map { unsafeBitCast($0, to: Accept4.self) }
    #endif

    private static func makeNonBlockingAndCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// Closes a listening socket no loop watches (yet).
    static func closeListening(_ fd: Int32) {
        close(fd)
    }

    /// Sends `response` without blocking and discards the request bytes already received; the caller closes.
    static func sendRefusal(_ client: Int32, response: [UInt8]) {
        _ = response.withUnsafeBytes {
            send(client, $0.baseAddress, $0.count, sendFlags | Int32(MSG_DONTWAIT))
        }
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { scratch in
            _ = recv(client, scratch.baseAddress, scratch.count, Int32(MSG_DONTWAIT))
        }
    }

    /// What a non-blocking one-byte peek finds on a socket.
    enum PendingInput {
        /// Bytes the peer sent that have not been read.
        case bytes
        /// Nothing yet, or the peer closed its side (an end of input is not a byte).
        case nothing
        /// The peek failed (a reset, say).
        case failed
    }

    /// A non-blocking one-byte peek. Closing a socket with unread bytes makes the kernel send a reset, which can
    /// destroy the response still in flight.
    static func pendingInput(_ fd: Int32) -> PendingInput {
        var byte: UInt8 = 0
        let peeked = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if peeked > 0 { return .bytes }
        return peeked == 0 || errno == EAGAIN || errno == EWOULDBLOCK ? .nothing : .failed
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

    // The C library's own calls, named apart from this type's methods of the same name.
    private static func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(fd, backlog)
        #else
        Darwin.listen(fd, backlog)
        #endif
    }

    private static func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>,
                                     _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        #if canImport(Glibc)
        Glibc.accept(fd, address, length)
        #else
        Darwin.accept(fd, address, length)
        #endif
    }
}
