import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PinsetAdmin
import PinsetAdminContract
import PinsetConnectionSlots
import PinsetCore
import PinsetFileSystem
import PinsetStore

/// Serves ``AdminAPI`` (and whatever else answers on the admin listener, such as the dashboard) over HTTP/1.1 on
/// SwiftNIO: over TLS with the configured certificate and key, or in plain text on a loopback address only. Few
/// connections and small bodies: it is for a team's admins, not for apps.
///
/// Connections are admitted by ``ConnectionSlots`` with ``connectionLimits``: whoever holds slots without
/// serving an authenticated request gives way to a new connection, so that floods of idle or trickling
/// connections cannot keep an admin out. Whether a request is authenticated is decided when its head arrives, by
/// `isAuthenticated`, with reading paused until it answers.
public final class AdminAPIServer: Sendable {
    public struct TLSFiles: Sendable {
        public var certificateChainPath: String
        public var privateKeyPath: String

        public init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// Who a request's head showed valid credentials for, when it arrived.
    public struct Admission: Sendable {
        /// The admin's name: what the connection's slot is held under.
        public var admin: String
        /// The admin the bearer token authenticated, the token's digest and when: the responder acts for that admin
        /// without looking the token up again only for the same token and while the lookup is fresh
        /// (``AdminAPI/admissionLifetime``). Nil for other credentials (a dashboard session).
        package var bearer: (account: AdminAccount, tokenDigest: SHA256Fingerprint, at: ContinuousClock.Instant)?

        /// Held under a dashboard session, which the dashboard checks itself.
        public init(admin: String) {
            self.admin = admin
        }

        /// Authenticated by the bearer token of digest `tokenDigest`, just now.
        package init(account: AdminAccount, tokenDigest: SHA256Fingerprint) {
            admin = account.name
            bearer = (account, tokenDigest, .now)
        }
    }

    /// Answers one request, with what its head was admitted as.
    public typealias Responder = @Sendable (AdminAPIRequest, Admission?) async -> AdminAPIResponse
    /// Who the valid credentials a request's head (given with an empty body: none of it has been read) carries are
    /// for, or nil. It decides which slots the connection may hold and is handed to the responder: it must not count
    /// failures or change anything, since the responder authenticates (and throttles) a request admitted without
    /// an account.
    public typealias CredentialCheck = @Sendable (AdminAPIRequest) async -> Admission?

    private let respond: Responder
    private let isAuthenticated: CredentialCheck
    private let host: String
    private let requestedPort: Int
    private let tls: NIOSSLContext?
    private let logger: Logger
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel = LockedValue<(any Channel)?>(nil)
    /// Connections open at once.
    public static let maximumConnections = 64
    /// Connections of one client address at once, an IPv6 address counting by its /64.
    public static let maximumConnectionsPerAddress = 8
    /// Slots held only by connections serving an authenticated request: the others hold at most
    /// `maximumConnections - reservedForAuthenticatedRequests`.
    public static let reservedForAuthenticatedRequests = 16
    static let connectionLimits = ConnectionSlots.Limits(
        total: maximumConnections, perAddress: maximumConnectionsPerAddress, reservedForProtected: reservedForAuthenticatedRequests
    )
    private let connections: ConnectionSlotTable

    /// - Throws: when `tls` is nil and `host` is not a loopback address, or the TLS files do not load.
    public convenience init(api: AdminAPI, isAuthenticated: @escaping CredentialCheck, host: String, port: Int, tls: TLSFiles?, logger: Logger) throws {
        try self.init(respond: { await api.respond(to: $0, admission: $1) }, isAuthenticated: isAuthenticated, host: host, port: port, tls: tls, logger: logger)
    }

    public init(respond: @escaping Responder, isAuthenticated: @escaping CredentialCheck, host: String, port: Int, tls: TLSFiles?, logger: Logger) throws {
        if tls == nil && !LoopbackHost.contains(host) {
            throw AdminAPIConfigurationError("The admin API listens on \(host) without TLS. Give it 'certificate' and 'privateKey' files, or listen on 127.0.0.1 or ::1: tokens must not cross a network in plain text.")
        }
        self.respond = respond
        self.isAuthenticated = isAuthenticated
        self.connections = ConnectionSlotTable(
            limits: Self.connectionLimits, logger: logger, listenerName: "Admin listener",
            protectedPhaseName: "serves an authenticated request")
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

    /// Binds and starts accepting; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let respond = self.respond
        let isAuthenticated = self.isAuthenticated
        let tls = self.tls
        let connections = self.connections
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let remote = channel.remoteAddress?.ipAddress ?? "unknown"
                guard let id = connections.admit(channel, address: remote) else { return channel.close() }
                channel.closeFuture.whenComplete { _ in connections.remove(id) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(AdminAPIHandler(
                        respond: respond, isAuthenticated: isAuthenticated, connection: id, connections: connections, remoteAddress: remote, overTLS: tls != nil
                    ))
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

/// One connection: reads a request (head and body, the body bounded), answers it through the responder, one at a
/// time, and tells ``ConnectionSlotTable`` where it is, so that admission knows whom it may evict.
final class AdminAPIHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let respond: AdminAPIServer.Responder
    private let isAuthenticated: AdminAPIServer.CredentialCheck
    private let connection: UInt64
    private let connections: ConnectionSlotTable
    private let remoteAddress: String
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// While the head's credentials are checked: the parts the decoder had already read, handled once the check
    /// answers, so that the connection's phase is settled before any of its body counts.
    private var heldParts: [HTTPServerRequestPart]?
    /// What the current request's head was admitted as.
    private var admission: AdminAPIServer.Admission?
    /// Closes the connection when a request is not complete in time (a trickle of bytes does not extend it), or
    /// when an idle connection sends no new request.
    private var deadline: Scheduled<Void>?
    /// Whole-request and idle bounds.
    static let requestDeadline: TimeAmount = .seconds(30)
    static let idleDeadline: TimeAmount = .seconds(30)

    /// Over TLS, browsers are told to use nothing else for this host (the dashboard's cookies go with it).
    private let overTLS: Bool

    init(respond: @escaping AdminAPIServer.Responder, isAuthenticated: @escaping AdminAPIServer.CredentialCheck, connection: UInt64,
         connections: ConnectionSlotTable, remoteAddress: String, overTLS: Bool) {
        self.overTLS = overTLS
        self.respond = respond
        self.isAuthenticated = isAuthenticated
        self.connection = connection
        self.connections = connections
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
        let part = unwrapInboundIn(data)
        if heldParts != nil {
            heldParts?.append(part)
        } else {
            handle(part, context: context)
        }
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            body = []
            arm(Self.requestDeadline, context: context)
            if Self.announcesTooLargeABody(head) {
                // Refused before a byte of the body is read: no reason to wait for it, or to let it hold the slot.
                self.head = nil
                context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
                write(Self.tooLarge.response, version: head.version, keepAlive: false, context: context)
                return
            }
            self.head = head
            checkCredentials(of: head, context: context)
        case .body(var buffer):
            guard self.head != nil else { return }
            if body.count + buffer.readableBytes > AdminAPI.maximumBodyBytes {
                // Answered at once and closed: the rest of the body is never read.
                self.head = nil
                context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
                write(Self.tooLarge.response, version: .http1_1, keepAlive: false, context: context)
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
            let admission = self.admission
            self.admission = nil
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            // The answer may wait on the database or a live-chain check: off the event loop, then back to it.
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            Task {
                let response = await respond(request, admission)
                bound.eventLoop.execute {
                    let (handler, context) = bound.value
                    handler.write(response, version: version, keepAlive: keepAlive, context: context)
                }
            }
        }
    }

    /// Pauses reading, asks `isAuthenticated` about the head off the event loop, settles the connection's phase with
    /// the answer, then handles what arrived meanwhile and reads on.
    private func checkCredentials(of head: HTTPRequestHead, context: ChannelHandlerContext) {
        heldParts = []
        connections.enter(.checkingCredentials, id: connection)
        context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
        let request = AdminAPIRequest(
            method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: [], remoteAddress: remoteAddress
        )
        let isAuthenticated = self.isAuthenticated
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        Task {
            let authenticated = await isAuthenticated(request)
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                handler.credentialsChecked(authenticated, context: context)
            }
        }
    }

    private func credentialsChecked(_ authenticated: AdminAPIServer.Admission?, context: ChannelHandlerContext) {
        let held = heldParts ?? []
        heldParts = nil
        guard context.channel.isActive else { return }
        admission = authenticated
        connections.enter(authenticated == nil ? .unprotectedRequest : .protectedRequest, id: connection, holder: authenticated?.admin)
        var requestComplete = false
        for part in held {
            if heldParts != nil {
                heldParts?.append(part)
                continue
            }
            if case .end = part { requestComplete = true }
            handle(part, context: context)
        }
        // Reading resumes for the rest of the body; once the request is complete, the answer's write resumes it.
        if !requestComplete && head != nil && heldParts == nil {
            context.channel.setOption(.autoRead, value: true).whenComplete { _ in }
            context.read()
        }
    }

    private static let tooLarge = APIFailure(413, "The body is larger than \(AdminAPI.maximumBodyBytes) bytes; send at most that much (the admin API's documents are small).")

    /// A `Content-Length` above the limit, or one too long to be a number at all.
    static func announcesTooLargeABody(_ head: HTTPRequestHead) -> Bool {
        head.headers["Content-Length"].contains { value in
            let digits = value.trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return false }
            return Int(digits).map { $0 > AdminAPI.maximumBodyBytes } ?? true
        }
    }

    private func write(_ response: AdminAPIResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: String(response.body.count))
        // Nothing is cached unless the answer says otherwise (only the dashboard's icon does).
        if !headers.contains(name: "Cache-Control") { headers.add(name: "Cache-Control", value: "no-store") }
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        if overTLS { headers.add(name: "Strict-Transport-Security", value: "max-age=31536000") }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        if keepAlive {
            arm(Self.idleDeadline, context: context)
            connections.enter(.idle, id: connection)
        }
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
