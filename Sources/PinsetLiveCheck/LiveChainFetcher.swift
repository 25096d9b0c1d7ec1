import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PinsetCore
import PinsetFileSystem
import X509

/// Connects to a live TLS server and returns the certificate chain it presents, leaf first.
///
/// Unless told not to, the chain is validated like a client would (RFC 5280 path to a trusted root and the
/// host name), so a pin is never recorded from, or checked against, an interceptor's certificate by accident.
/// Resolving the name (where an ``OutboundAddressPolicy`` judges its addresses), connecting and the handshake
/// together take at most `timeout`; cancelling the calling task ends the wait for any of them at once.
public struct LiveChainFetcher: Sendable {
    public static let defaultTimeout = Duration.seconds(10)

    /// The roots the chain must lead to: the system's store, or the CAs of a file.
    public enum TrustRoots: Sendable {
        case system
        case certificates([Certificate])

        /// The CA certificates of a PEM or DER file (at most 1 MiB).
        ///
        /// - Throws: `LiveChainError` saying which file and why.
        public static func file(_ path: String) throws(LiveChainError) -> TrustRoots {
            do {
                let bytes = try AtomicFile.read(path, limit: 1024 * 1024)
                return .certificates(try PinMaterial.certificates(fromFileContents: bytes, origin: path))
            } catch let error as InputError {
                throw LiveChainError(error.message, kind: .invalidInput)
            } catch {
                throw LiveChainError("\(error) Check the path of the CA file.", kind: .invalidInput)
            }
        }
    }

    public var roots: TrustRoots
    public var timeout: Duration
    /// Runs the connections; `nil` makes a one-thread group per fetch (one-off commands).
    public var group: (any EventLoopGroup)?
    /// Which addresses a host name may lead to (the server's checks); nil connects wherever the name resolves (a
    /// command an admin runs on their own machine). A `connectTo` target is configuration, never judged by it.
    public var addressPolicy: OutboundAddressPolicy?

    public init(roots: TrustRoots = .system, timeout: Duration = defaultTimeout, group: (any EventLoopGroup)? = nil, addressPolicy: OutboundAddressPolicy? = nil) {
        self.roots = roots
        self.timeout = timeout
        self.group = group
        self.addressPolicy = addressPolicy
    }

    /// The chain `host` presents on `port` (reached at `connectTo` when given), validated unless `verify` is false.
    ///
    /// - Throws: `LiveChainError` when the server cannot be reached, completes no handshake in time, presents
    ///   no certificate, or its chain does not validate.
    public func fetchChain(host: String, port: Int, connectTo: ConnectTarget? = nil, verify: Bool = true) async throws(LiveChainError) -> [Certificate] {
        try await fetchValidatedChain(host: host, port: port, connectTo: connectTo, verify: verify).presented
    }

    /// The chain `host` presents, and — when validated — the path the validation built, leaf to trust anchor: it
    /// holds the root, which servers usually do not send, and which apps' pins may name.
    ///
    /// - Throws: as ``fetchChain(host:port:connectTo:verify:)``.
    public func fetchValidatedChain(host: String, port: Int, connectTo: ConnectTarget? = nil, verify: Bool = true) async throws(LiveChainError) -> (presented: [Certificate], validatedPath: [Certificate]) {
        let address = connectTo?.address ?? host
        let addressPort = connectTo?.port ?? port
        let shownEndpoint = connectTo.map { "\(Self.endpoint(host: host, port: port)) (connecting to \($0))" } ?? Self.endpoint(host: host, port: port)
        let activeGroup: any EventLoopGroup
        var ownGroup: MultiThreadedEventLoopGroup?
        if let group {
            activeGroup = group
        } else {
            let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            ownGroup = made
            activeGroup = made
        }
        defer { ownGroup?.shutdownGracefully { _ in } }
        let started = ContinuousClock.now
        // The addresses judged are the ones connected to: a name is resolved once, so a second answer (DNS
        // rebinding) cannot lead the connection elsewhere.
        var checkedAddresses: [SocketAddress]?
        if let addressPolicy, connectTo == nil {
            checkedAddresses = try await Self.permittedAddresses(of: host, port: port, policy: addressPolicy, endpoint: shownEndpoint, timeout: timeout)
        }
        // One bound for resolving, connecting and the handshake together.
        let remaining = checkedAddresses == nil ? timeout : max(timeout - (ContinuousClock.now - started), .milliseconds(1))
        let chain = try await handshake(host: host, address: address, port: addressPort, endpoint: shownEndpoint, group: activeGroup,
                                        checkedAddresses: checkedAddresses, timeout: remaining)
        guard verify else { return (chain, []) }
        let path = try await validate(leaf: chain[0], intermediates: Array(chain.dropFirst()), host: host, endpoint: shownEndpoint)
        return (chain, path)
    }

    public static func endpoint(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private func handshake(
        host: String, address: String, port: Int, endpoint: String, group: any EventLoopGroup, checkedAddresses: [SocketAddress]?, timeout bound: Duration
    ) async throws(LiveChainError) -> [Certificate] {
        let timeout = TimeAmount.nanoseconds(Int64(bound.components.seconds) * 1_000_000_000 + bound.components.attoseconds / 1_000_000_000)
        let started = NIODeadline.now()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .noHostnameVerification
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw LiveChainError("Could not set up TLS: \(error).")
        }
        let presented = group.next().makePromise(of: [NIOSSLCertificate].self)
        let isIPAddress = Self.isIPAddress(host)
        var bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Verification happens below with swift-certificates; here the chain is only captured.
                    let handler = try NIOSSLClientHandler(
                        context: context,
                        serverHostname: isIPAddress ? nil : host,
                        customVerificationCallback: { certificates, verification in
                            presented.succeed(certificates)
                            verification.succeed(.certificateVerified)
                        }
                    )
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        if let checkedAddresses { bootstrap = bootstrap.resolver(CheckedAddressResolver(addresses: checkedAddresses, loop: group.next())) }
        let channel: any Channel
        do {
            let connecting = bootstrap.connect(host: address, port: port)
            let connected = connecting.eventLoop.makePromise(of: (any Channel).self)
            connecting.cascade(to: connected)
            // A host that drops the connection attempt would otherwise hold a stopping monitor for the rest of
            // the timeout. The attempt goes on until its own timeout; a connection it still makes is closed.
            channel = try await withTaskCancellationHandler {
                try await connected.futureResult.get()
            } onCancel: {
                connecting.whenSuccess { $0.close(promise: nil) }
                connected.fail(LiveChainError("The check of \(endpoint) was cancelled before the connection was made."))
            }
        } catch {
            presented.fail(error)
            throw LiveChainError("Could not connect to \(endpoint): \(error). Check the host, port and that the server is up.")
        }
        // One bound for connecting and the handshake together.
        let seconds = Double(self.timeout.components.seconds) + Double(self.timeout.components.attoseconds) / 1e18
        let deadline = channel.eventLoop.scheduleTask(deadline: started + timeout) {
            presented.fail(LiveChainError("\(endpoint) did not complete a TLS handshake within \(seconds) s."))
        }
        channel.closeFuture.whenComplete { _ in
            presented.fail(LiveChainError("\(endpoint) closed the connection before presenting a certificate."))
        }
        let nioChain: [NIOSSLCertificate]
        do {
            // A stopping monitor cancels its pass: a peer that sends nothing must not hold the stop for the
            // rest of its timeout.
            nioChain = try await withTaskCancellationHandler {
                try await presented.futureResult.get()
            } onCancel: {
                presented.fail(LiveChainError("The check of \(endpoint) was cancelled before a TLS handshake completed."))
            }
        } catch {
            deadline.cancel()
            // Closed before returning, so callers that bound their connections never exceed the bound.
            try? await channel.close().get()
            throw error as? LiveChainError ?? LiveChainError("The TLS handshake with \(endpoint) failed: \(error).")
        }
        deadline.cancel()
        try? await channel.close().get()
        do {
            let chain = try nioChain.map { try Certificate(derEncoded: try $0.toDERBytes()) }
            guard !chain.isEmpty else { throw LiveChainError("\(endpoint) presented no certificate.") }
            return chain
        } catch let error as LiveChainError {
            throw error
        } catch {
            throw LiveChainError("\(endpoint) presented a certificate that does not parse: \(error).")
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    private func validate(leaf: Certificate, intermediates: [Certificate], host: String, endpoint: String) async throws(LiveChainError) -> [Certificate] {
        guard intermediates.count < PresentedChain.maximumCertificates else {
            throw LiveChainError("\(endpoint) presented \(intermediates.count + 1) certificates; at most \(PresentedChain.maximumCertificates) are validated (real chains have two to five).", kind: .notValidated)
        }
        let isIPAddress = Self.isIPAddress(host)
        let store: CertificateStore
        switch roots {
        case .system: store = SystemTrustRoots.store
        case .certificates(let certificates): store = CertificateStore(certificates)
        }
        var verifier = Verifier(rootCertificates: store) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIPAddress ? nil : host, serverIP: isIPAddress ? host : nil)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        switch result {
        case .validCertificate(let path):
            return Array(path)
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }.joined(separator: "; ")
            throw LiveChainError("The chain presented by \(endpoint) does not validate (\(reasons.isEmpty ? "no path to a trusted root" : reasons)).", kind: .notValidated)
        }
    }

    /// `HOST:PORT`, with an IPv6 host in brackets.
    ///
    /// - Throws: `LiveChainError` when `endpoint` has no host or no valid port.
    public static func parseEndpoint(_ endpoint: String) throws(LiveChainError) -> (host: String, port: Int) {
        guard let colon = endpoint.lastIndex(of: ":"), let port = Int(endpoint[endpoint.index(after: colon)...]), (1...65535).contains(port) else {
            throw LiveChainError("'\(endpoint)' is not host:port. Example: --from-host api.example.com:443", kind: .invalidInput)
        }
        var host = String(endpoint[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw LiveChainError("'\(endpoint)' has no host name before the port.", kind: .invalidInput) }
        return (host, port)
    }
}
