import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PinsetCore
import PinsetFileSystem

/// Serves ``AdminAPI`` (and whatever else answers on the admin listener, such as the dashboard) over HTTP/1.1 on
/// SwiftNIO: over TLS with the configured certificate and key, or in plain text on a loopback address only. Few
/// connections and small bodies: it is for a team's admins, not for apps.
public final class AdminAPIServer: Sendable {
    public struct TLSFiles: Sendable {
        public var certificateChainPath: String
        public var privateKeyPath: String

        public init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// Answers one request.
    public typealias Responder = @Sendable (AdminAPIRequest) async -> AdminAPIResponse

    private let respond: Responder
    private let host: String
    private let requestedPort: Int
    private let tls: NIOSSLContext?
    private let logger: Logger
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel = LockedValue<(any Channel)?>(nil)
    /// Connections open at once, and from one address; more are closed on accept.
    public static let maximumConnections = 64
    public static let maximumConnectionsPerAddress = 8
    private let connections = LockedValue<[String: Int]>([:])

    /// - Throws: when `tls` is nil and `host` is not a loopback address, or the TLS files do not load.
    public convenience init(api: AdminAPI, host: String, port: Int, tls: TLSFiles?, logger: Logger) throws {
        try self.init(respond: { await api.respond(to: $0) }, host: host, port: port, tls: tls, logger: logger)
    }

    public init(respond: @escaping Responder, host: String, port: Int, tls: TLSFiles?, logger: Logger) throws {
        if tls == nil && !Self.isLoopback(host) {
            throw AdminAPIConfigurationError("The admin API listens on \(host) without TLS. Give it 'certificate' and 'privateKey' files, or listen on 127.0.0.1 or ::1: tokens must not cross a network in plain text.")
        }
        self.respond = respond
        self.host = host
        self.requestedPort = port
        self.logger = logger
        if let tls {
            let certificates = try NIOSSLCertificate.fromPEMFile(tls.certificateChainPath).map { NIOSSLCertificateSource.certificate($0) }
            // Read like every private key: refused when group or others can read it.
            let keyBytes = try PrivateFilePermissions.read(tls.privateKeyPath, limit: 64 * 1024)
            let key = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: certificates, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            self.tls = try NIOSSLContext(configuration: configuration)
        } else {
            self.tls = nil
        }
    }

    /// `localhost`, or an IP address in 127.0.0.0/8 or ::1, parsed as an address: a name such as
    /// `127.example.net` is not loopback.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        guard let address = try? SocketAddress(ipAddress: host, port: 0) else { return false }
        switch address {
        case .v4(let v4): return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6: return address.ipAddress == "::1"
        default: return false
        }
    }

    /// Binds and starts accepting; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let respond = self.respond
        let tls = self.tls
        let connections = self.connections
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let remote = channel.remoteAddress?.ipAddress ?? "unknown"
                let admitted = connections.withLock { open -> Bool in
                    guard open.values.reduce(0, +) < Self.maximumConnections, open[remote, default: 0] < Self.maximumConnectionsPerAddress else { return false }
                    open[remote, default: 0] += 1
                    return true
                }
                guard admitted else { return channel.close() }
                channel.closeFuture.whenComplete { _ in
                    connections.withLock { open in
                        open[remote, default: 1] -= 1
                        if open[remote] == 0 { open[remote] = nil }
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(AdminAPIHandler(respond: respond, remoteAddress: remote, overTLS: tls != nil))
                }
            }
            .childChannelOption(.socketOption(.so_keepalive), value: 1)
        let bound = try bootstrap.bind(host: host, port: requestedPort).wait()
        channel.withLock { $0 = bound }
        let port = bound.localAddress?.port ?? requestedPort
        logger.info("Admin API listening", metadata: ["address": "\(host):\(port)", "tls": "\(tls != nil)"])
        return port
    }

    public var port: Int? { channel.withLock { $0?.localAddress?.port } }

    public func shutdown() async {
        let bound = channel.withLock { $0 }
        try? await bound?.close()
        try? await group.shutdownGracefully()
    }
}

public struct AdminAPIConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// One connection: reads a request (head and body, the body bounded), answers it through ``AdminAPI``, one at a
/// time.
final class AdminAPIHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let respond: AdminAPIServer.Responder
    private let remoteAddress: String
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// Closes the connection when a request is not complete in time (a trickle of bytes does not extend it), or
    /// when an idle connection sends no new request.
    private var deadline: Scheduled<Void>?
    /// Whole-request and idle bounds.
    static let requestDeadline: TimeAmount = .seconds(30)
    static let idleDeadline: TimeAmount = .seconds(30)

    /// Over TLS, browsers are told to use nothing else for this host (the dashboard's cookies go with it).
    private let overTLS: Bool

    init(respond: @escaping AdminAPIServer.Responder, remoteAddress: String, overTLS: Bool) {
        self.overTLS = overTLS
        self.respond = respond
        self.remoteAddress = remoteAddress
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(Self.idleDeadline, context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    private func arm(_ amount: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: amount) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            arm(Self.requestDeadline, context: context)
        case .body(var buffer):
            guard self.head != nil else { return }
            if body.count + buffer.readableBytes > AdminAPI.maximumBodyBytes {
                // Answered at once and closed: the rest of the body is never read.
                self.head = nil
                write(APIFailure(413, "The body is larger than \(AdminAPI.maximumBodyBytes) bytes.").response, version: .http1_1, keepAlive: false, context: context)
            } else if let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body += bytes
            }
        case .end:
            guard let head else { return }
            self.head = nil
            deadline?.cancel()
            let request = AdminAPIRequest(
                method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body, remoteAddress: remoteAddress
            )
            let keepAlive = head.isKeepAlive
            let version = head.version
            let respond = self.respond
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            // The answer may wait on the database or a live-chain check: off the event loop, then back to it.
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            Task {
                let response = await respond(request)
                bound.eventLoop.execute {
                    let (handler, context) = bound.value
                    handler.write(response, version: version, keepAlive: keepAlive, context: context)
                }
            }
        }
    }

    private func write(_ response: AdminAPIResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if overTLS { headers.add(name: "Strict-Transport-Security", value: "max-age=31536000") }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        if keepAlive { arm(Self.idleDeadline, context: context) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if keepAlive {
                channel.setOption(.autoRead, value: true).whenComplete { _ in }
                channel.read()
            } else {
                channel.close(promise: nil)
            }
        }
    }

}
