import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PinsetTransparency

/// The log's side of c2sp.org/tlog-witness: sends an ``AddCheckpointRequest`` to one witness and returns its
/// cosignature lines.
///
/// The request goes to `<submission prefix>/add-checkpoint` over HTTP/1.1, or over TLS (verified against the system's
/// roots, or the given ones) for an `https://` prefix. The whole exchange is bounded by ``timeout`` and the answer by
/// ``maximumResponseBytes``. The cosignatures are returned as parsed, not verified: the caller keeps those from
/// witness keys it trusts (``NoteVerifierSet`` over the checkpoint's text), as the specification requires. A 409 is
/// returned as ``WitnessClientError/Kind/conflict(latestSize:)`` so that the caller can send the checkpoint again
/// with a consistency proof from that size. Immutable and thread-safe.
public struct WitnessClient: Sendable {
    public let submissionPrefix: String
    public let timeout: TimeAmount
    /// An answer larger than this is refused: a cosignature line is about a hundred bytes.
    public static let maximumResponseBytes = 64 * 1024

    private let host: String
    private let port: Int
    private let target: String
    private let tls: NIOSSLContext?

    /// - Parameters:
    ///   - submissionPrefix: the witness's URL without `/add-checkpoint`, such as `http://127.0.0.1:7380` or
    ///     `https://witness.example.com/pinset`.
    ///   - trustRoots: for https, the CAs to trust instead of the system's.
    public init(submissionPrefix: String, trustRoots: [NIOSSLCertificate]? = nil, timeout: TimeAmount = .seconds(10)) throws(WitnessClientError) {
        func invalid(_ reason: String) -> WitnessClientError {
            WitnessClientError(.unreachable, witness: submissionPrefix, reason)
        }
        guard !submissionPrefix.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }),
              let components = URLComponents(string: submissionPrefix),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty
        else {
            throw invalid("'\(submissionPrefix)' is not a witness URL. Give its submission prefix, such as http://127.0.0.1:7380 or https://witness.example.com.")
        }
        guard components.query == nil, components.fragment == nil, components.user == nil, components.password == nil else {
            throw invalid("'\(submissionPrefix)' carries a query, a fragment or credentials; give only scheme, host, port and path.")
        }
        guard trustRoots == nil || scheme == "https" else {
            throw invalid("Trust roots are for an https:// witness; '\(submissionPrefix)' is plain HTTP.")
        }
        self.submissionPrefix = submissionPrefix
        self.timeout = timeout
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
        let path = components.percentEncodedPath
        self.target = (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/add-checkpoint"
        if scheme == "https" {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            if let trustRoots { configuration.trustRoots = .certificates(trustRoots) }
            do {
                tls = try NIOSSLContext(configuration: configuration)
            } catch {
                throw invalid("Cannot set up TLS for \(submissionPrefix): \(error).")
            }
        } else {
            tls = nil
        }
    }

    /// Sends `request` and returns the witness's cosignature lines (at least one).
    public func addCheckpoint(_ request: AddCheckpointRequest) async throws(WitnessClientError) -> [NoteSignature] {
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try await exchange(body: Array(request.encoded.utf8))
        } catch let error as WitnessClientError {
            throw error
        } catch {
            throw WitnessClientError(.unreachable, witness: submissionPrefix, "No answer from \(host):\(port): \(error).")
        }
        return try Self.interpret(status: answer.status, body: answer.body, witness: submissionPrefix)
    }

    /// What an answer means under tlog-witness.
    static func interpret(status: Int, body: [UInt8], witness: String) throws(WitnessClientError) -> [NoteSignature] {
        let text = String(decoding: body, as: UTF8.self)
        switch status {
        case 200:
            guard let signatures = try? NoteSignature.parseLines(text), !signatures.isEmpty else {
                throw WitnessClientError(
                    .malformedResponse, witness: witness, "It answered 200 without note signature lines; it is not a tlog-witness.")
            }
            return signatures
        case 409:
            guard let size = parseTreeSize(text) else {
                throw WitnessClientError(
                    .malformedResponse, witness: witness, "It answered 409 without the latest size it cosigned as a decimal line.")
            }
            throw WitnessClientError(
                .conflict(latestSize: size), witness: witness,
                "It last cosigned size \(size): send the checkpoint again with 'old \(size)' and a consistency proof from that size.")
        default:
            throw WitnessClientError(.refused(status: status), witness: witness, "It refused with HTTP \(status): \(quoted(text))")
        }
    }

    /// `<decimal size>\n`, without leading zeroes.
    static func parseTreeSize(_ text: String) -> UInt64? {
        guard text.hasSuffix("\n") else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              digits == "0" || !digits.hasPrefix("0"), let size = UInt64(digits), size <= UInt64(Int64.max)
        else { return nil }
        return size
    }

    /// The witness's words, made safe for a log line or a terminal: control characters escaped, at most 300 of them.
    private static func quoted(_ text: String) -> String {
        let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let escaped = trimmed.unicodeScalars.prefix(300).map { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
        return trimmed.unicodeScalars.count > 300 ? escaped + "…" : escaped
    }

    private func exchange(body: [UInt8]) async throws -> (status: Int, body: [UInt8]) {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let answer = loop.makePromise(of: (Int, [UInt8]).self)
        let tls = self.tls
        // With no name (an IP address), NIOSSL checks the certificate against the address connected to.
        let serverName = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        let witness = submissionPrefix
        let timeout = self.timeout
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverName))
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(
                            WitnessResponseCollector(answer: answer, limit: Self.maximumResponseBytes, witness: witness))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            answer.fail(error)
            throw error
        }
        // Closing ends the exchange: the collector then fails the promise if the answer was not complete.
        let deadline = loop.scheduleTask(in: timeout) {
            answer.fail(WitnessClientError(.unreachable, witness: witness, "No complete answer within \(timeout.nanoseconds / 1_000_000_000) s."))
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        var headers = HTTPHeaders()
        let hostField = host.contains(":") ? "[\(host)]" : host
        headers.add(name: "Host", value: port == 80 || port == 443 ? hostField : "\(hostField):\(port)")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: target, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let (status, bytes) = try await answer.futureResult.get()
        try? await channel.close()
        return (status, bytes)
    }
}

/// Collects one response, bounded, and fulfils the promise at its end, or fails it when the connection ends first.
private final class WitnessResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let answer: EventLoopPromise<(Int, [UInt8])>
    private let limit: Int
    private let witness: String
    private var status = 0
    private var body: [UInt8] = []

    init(answer: EventLoopPromise<(Int, [UInt8])>, limit: Int, witness: String) {
        self.answer = answer
        self.limit = limit
        self.witness = witness
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= limit else {
                answer.fail(WitnessClientError(.malformedResponse, witness: witness, "Its answer is larger than \(limit) bytes."))
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            answer.succeed((status, body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answer.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        answer.fail(WitnessClientError(.unreachable, witness: witness, "The connection closed before the answer was complete."))
        context.fireChannelInactive()
    }
}
