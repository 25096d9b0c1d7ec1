import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import PinsetAdminContract
import PinsetCore

/// Calls a Pinset server's admin API as a named admin: the contract's operations (``AdminOperation``), one JSON
/// request at a time over HTTP/1.1, on TLS verified against the system's roots or a given CA file. Plain HTTP only
/// to a loopback address, as the server itself allows (``LoopbackHost``): a token must not cross a network in clear
/// text.
public struct AdminAPIClient: Sendable {
    public let server: URL
    private let host: String
    private let port: Int
    private let basePath: String
    private let tls: TLSConfiguration?
    private let token: String
    /// A whole exchange, connect to last byte.
    public static let timeout: TimeAmount = .seconds(60)
    /// An answer larger than this is refused: the API's documents are small.
    public static let maximumResponseBytes = 16 * 1024 * 1024

    /// `text` as errors may repeat it: whatever lies between `://` and the last `@` (user information, however it is
    /// spelled), and any query or fragment, replaced by `…`: the places a token pasted into the URL would be.
    static func redactedForErrors(_ text: String) -> String {
        var shown = text
        if let start = shown.range(of: "://"), let at = shown[start.upperBound...].lastIndex(of: "@") {
            shown = String(shown[..<start.upperBound]) + "…" + String(shown[at...])
        } else if !shown.contains("://"), shown.contains("@") {
            return "…"
        }
        if let query = shown.firstIndex(where: { $0 == "?" || $0 == "#" }) { shown = String(shown[..<query]) + "…" }
        return shown
    }

    public init(server given: String, caFile: String?, token: String) throws(AdminAPIClientError) {
        // Errors repeat the URL as given, with user information, query and fragment taken out: a token pasted there
        // must not reach a terminal or a CI log.
        let text = Self.redactedForErrors(given)
        guard let url = URL(string: given), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty else {
            throw AdminAPIClientError("'\(text)' is not a server URL. Give the admin API's address, for example --server https://pinset.example.com:9443.")
        }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if scheme == "http" && !LoopbackHost.contains(bareHost) {
            throw AdminAPIClientError("--server \(text) is plain HTTP to another machine: the token would cross the network in clear text. Use https://, or a loopback address.")
        }
        if url.query != nil || url.fragment != nil || url.user != nil || text != given {
            throw AdminAPIClientError("--server \(text) carries a query or credentials; give only scheme, host, port and path. The token comes from --token-file or $PINSET_ADMIN_TOKEN, never the URL.")
        }
        if caFile != nil && scheme == "http" {
            throw AdminAPIClientError("--server-ca is for an https:// server; \(text) is plain HTTP.")
        }
        // The path as written (still percent-encoded), so that nothing decoded can reach the request line.
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        if path.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) || text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw AdminAPIClientError("--server \(text) contains spaces or control characters; give a plain URL such as https://pinset.example.com:9443.")
        }
        // The token goes into a header field: anything but visible ASCII would end it, or the request.
        guard !token.isEmpty, token.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw AdminAPIClientError("The admin token is empty or holds spaces or control characters; give the token 'pinset admin token NAME' printed, as it is.")
        }
        self.server = url
        // Plain HTTP is allowed only to loopback: the name localhost is not left to a resolver to decide.
        self.host = scheme == "http" && bareHost.lowercased() == "localhost" ? "127.0.0.1" : bareHost
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
        self.basePath = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.token = token
        if scheme == "https" {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            if let caFile {
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
                } catch {
                    throw AdminAPIClientError("Could not read the CA certificates in --server-ca \(caFile): \(error). Give a PEM file of the CA that issued the server's certificate.")
                }
            }
            tls = configuration
        } else {
            tls = nil
        }
    }

    /// Calls `operation` with its path parameters, query values (nil ones are left out) and the contract's body for
    /// it, and returns the contract's document for its answer.
    ///
    /// - Precondition: `body` is the type the operation takes, and `Answer` the type it answers with.
    public func call<Body: AdminRequestBody, Answer: AdminResponseBody>(
        _ operation: AdminOperation, _ parameters: [String: String] = [:], query: [(String, String?)] = [], body: Body, answer: Answer.Type = Answer.self
    ) async throws -> Answer {
        precondition(Body.operations.contains(operation), "\(operation) does not take \(Body.self)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try await send(operation, parameters, query: query, body: Array(try encoder.encode(body)))
    }

    /// Calls `operation`, which takes no body, with its path parameters and query values (nil ones are left out).
    public func call<Answer: AdminResponseBody>(
        _ operation: AdminOperation, _ parameters: [String: String] = [:], query: [(String, String?)] = [], answer: Answer.Type = Answer.self
    ) async throws -> Answer {
        precondition(operation.body.isEmpty, "\(operation) takes a body: give its AdminRequest")
        return try await send(operation, parameters, query: query, body: [])
    }

    /// Sends one call. Throws ``AdminAPIRefusal`` with the server's code and message for a refusal, and
    /// ``AdminAPIClientError`` for a server that cannot be reached or answers other than JSON.
    ///
    /// - Precondition: the query's names are ones the operation declares.
    private func send<Answer: AdminResponseBody>(
        _ operation: AdminOperation, _ parameters: [String: String], query: [(String, String?)], body bodyBytes: [UInt8]
    ) async throws -> Answer {
        precondition(Answer.answers(operation), "\(operation) does not answer with \(Answer.self)")
        precondition(query.allSatisfy { name, _ in operation.query.contains { $0.name == name } }, "\(operation) declares the query \(operation.query.map(\.name))")
        let target = basePath + operation.target(parameters, query: query)
        let raw: (status: Int, body: [UInt8])
        do {
            raw = try await exchange(method: operation.method, target: target, body: bodyBytes)
        } catch let error as AdminAPIClientError {
            throw error
        } catch {
            throw AdminAPIClientError("Could not reach the admin API at \(server.absoluteString): \(error). Is 'pinset serve' running there with an 'api' section, and does --server-ca name the CA of its certificate?")
        }
        let isJSON = (try? JSONSerialization.jsonObject(with: Data(raw.body))) != nil
        guard (200..<300).contains(raw.status) else {
            let refusal = (try? JSONDecoder().decode(AdminAPIError.self, from: Data(raw.body)))
                ?? AdminAPIError(status: raw.status, code: .forStatus(raw.status), message: "HTTP status \(raw.status)")
            throw AdminAPIRefusal(error: refusal)
        }
        if !isJSON {
            // Something else answered (a proxy, another service): nothing it says is taken as done.
            throw AdminAPIClientError("The server at \(server.absoluteString) answered HTTP \(raw.status) without a JSON document: it is not a Pinset admin API, or a proxy in between answered. Whether the request took effect is unknown; check with 'pinset review list' or the audit log.")
        }
        do {
            return try AdminResponse.decode(Answer.self, from: raw.body)
        } catch {
            throw AdminAPIClientError("The admin API answered HTTP \(raw.status) with a document that is not the \(operation.id) answer this client expects (\(error)); is the server a Pinset of this version?")
        }
    }

    private func exchange(method: String, target: String, body: [UInt8]) async throws -> (status: Int, body: [UInt8]) {
        let group = MultiThreadedEventLoopGroup.singleton
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        // With no name (an IP address), NIOSSL checks the certificate against the address connected to.
        let serverName = Self.isIPAddress(host) ? nil : host
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                        try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(promise: channel.eventLoop.makePromise()))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                }
            }
            .connect(host: host, port: port).get()
        // The whole exchange from here, the TLS handshake included: closing ends it, and every wait below with it.
        let deadline = channel.eventLoop.scheduleTask(in: Self.timeout) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        if tls == nil, let address = channel.remoteAddress?.ipAddress, !LoopbackHost.contains(address) {
            try? await channel.close()
            throw AdminAPIClientError("\(host) resolved to \(address), which is not a loopback address: the token is not sent over plain HTTP to it.")
        }
        if sslContext != nil, let serverName {
            // NIOSSL also accepts a certificate for the address connected to when a name was asked for: whoever can
            // point the name at an address of theirs, and holds a certificate for that address, would get the token.
            // The name must be the certificate's own, checked before the token is written.
            do {
                try await channel.pipeline.handler(type: HandshakeWatcher.self).flatMap(\.promise.futureResult).get()
                let certificate = try await channel.nioSSL_peerCertificate().get()
                guard let certificate, Self.certificate(certificate, namesHost: serverName) else {
                    throw AdminAPIClientError("The admin API at \(serverName) presented a certificate that does not name \(serverName) (a certificate for an IP address is not taken for a host name): the token was not sent. Give the admin API a certificate with the name as a DNS name, or --server the address its certificate names.")
                }
            } catch {
                try? await channel.close()
                throw error
            }
        }
        // The collector joins only the connection that won: the request is sent on it alone, after this.
        let promise = channel.eventLoop.makePromise(of: (Int, [UInt8]).self)
        do {
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise, limit: Self.maximumResponseBytes))
            }.get()
        } catch {
            promise.fail(error)
            try? await channel.close()
            throw error
        }
        // Closing (the deadline above) ends the exchange: the collector then fails the promise, if the answer was not
        // complete.
        var headers = HTTPHeaders()
        let hostField = host.contains(":") ? "[\(host)]" : host
        headers.add(name: "Host", value: port == 443 || port == 80 ? hostField : "\(hostField):\(port)")
        headers.add(name: "Authorization", value: "Bearer \(token)")
        headers.add(name: "Accept", value: "application/json")
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Content-Length", value: String(body.count))
        if !body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: target, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if !body.isEmpty { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
        do {
            try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        } catch {
            // The connection ended before the request was out (a TLS handshake the server refused, say): the
            // collector may have joined a channel that was already closed, so nothing else completes the promise.
            promise.fail(error)
            try? await channel.close()
            throw error
        }
        let (status, bytes) = try await promise.futureResult.get()
        try? await channel.close()
        return (status, bytes)
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// Whether one of `certificate`'s DNS names is `host` (ignoring case and a final dot), or a wildcard `*.` standing
    /// for its first label alone (RFC 6125, 6.4.3).
    static func certificate(_ certificate: NIOSSLCertificate, namesHost host: String) -> Bool {
        func normalised(_ name: String) -> String { (name.hasSuffix(".") ? String(name.dropLast()) : name).lowercased() }
        let wanted = normalised(host)
        let parent = wanted.firstIndex(of: ".").map { String(wanted[$0...]) }
        for name in certificate._subjectAlternativeNames() where name.nameType == .dnsName {
            let dnsName = normalised(String(decoding: name.contents, as: UTF8.self))
            if dnsName == wanted { return true }
            if dnsName.hasPrefix("*."), let parent, dnsName.dropFirst() == parent, parent.dropFirst().contains(".") { return true }
        }
        return false
    }
}

/// Completes its promise when the TLS handshake is done, or fails it when the connection ends or errs first.
private final class HandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let promise: EventLoopPromise<Void>

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { promise.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
    }
}

/// Collects one response, bounded, and fulfils the promise at its end (or fails it when the connection ends first).
private final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<(Int, [UInt8])>
    private let limit: Int
    private var status = 0
    private var body: [UInt8] = []
    private var done = false

    init(promise: EventLoopPromise<(Int, [UInt8])>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A channel that closed before this handler joined sends it no channelInactive.
        if !context.channel.isActive {
            finish(.failure(AdminAPIClientError("Could not reach the admin API: the connection closed before the request was sent (a server certificate this client does not trust, or a server that is no Pinset admin API). Check --server and --server-ca.")))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= limit else {
                finish(.failure(AdminAPIClientError("The admin API's answer is larger than \(limit) bytes.")))
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            finish(.success((status, body)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed before an answer began: the exchange never reached the API (a TLS handshake refused on either
        // side ends here too, when its error was not the first to arrive).
        finish(.failure(AdminAPIClientError(status == 0
            ? "Could not reach the admin API: the connection closed before any answer (a server certificate this client does not trust, a server that is no Pinset admin API, or no answer within \(AdminAPIClient.timeout.nanoseconds / 1_000_000_000) s). Check --server and --server-ca."
            : "The admin API closed the connection, or did not answer within \(AdminAPIClient.timeout.nanoseconds / 1_000_000_000) s, before its answer was complete.")))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<(Int, [UInt8]), any Error>) {
        guard !done else { return }
        done = true
        promise.completeWith(result)
    }
}

/// The server refused a call: its status, its stable code and its message.
public struct AdminAPIRefusal: Error, Sendable, CustomStringConvertible {
    public let error: AdminAPIError

    /// The server's message escaped: it reaches a terminal, and a server is no trusted source of control characters.
    /// Its lines stay lines (a certificate to copy is one of its own); each is escaped.
    public var description: String {
        "The server refused (HTTP \(error.status)): " + TerminalText.escapeLines(error.message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    }
}

/// A call that got no answer from an admin API, or one that is not the API's.
public struct AdminAPIClientError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ message: String) {
        description = TerminalText.escape(message)
    }
}
