import PinsetCore
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import X509

/// Connects to a live TLS server and returns the certificate chain it presents, leaf first.
///
/// Unless told not to, the chain is validated like a client would (RFC 5280 path to a trusted root and the
/// host name), so a pin is never recorded from an interceptor's certificate by accident.
///
/// `connectTo` reaches the server at another address (a staging machine, one load-balancer member, a
/// loopback test) while the handshake still sends and validates the endpoint's host name, like curl's
/// `--connect-to`: what is checked is the certificate for the name, wherever it is served from.
enum LiveChainFetcher {
    static let timeout = TimeAmount.seconds(10)

    static func fetchChain(endpoint: String, caFile: String?, verify: Bool, connectTo: String? = nil) async throws -> [Certificate] {
        let (host, port) = try parse(endpoint)
        let (address, addressPort) = try connectTo.map { try parseConnectTo($0, defaultPort: port) } ?? (host, port)
        let shownEndpoint = connectTo == nil ? endpoint : "\(endpoint) (connecting to \(connectTo ?? ""))"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let chain = try await fetchChain(host: host, address: address, port: addressPort, endpoint: shownEndpoint, group: group)
            try? await group.shutdownGracefully()
            if verify {
                try await validate(leaf: chain[0], intermediates: Array(chain.dropFirst()), host: host, caFile: caFile, endpoint: shownEndpoint)
            }
            return chain
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func fetchChain(host: String, address: String, port: Int, endpoint: String, group: MultiThreadedEventLoopGroup) async throws -> [Certificate] {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .noHostnameVerification
        let context = try NIOSSLContext(configuration: tls)
        let presented = group.next().makePromise(of: [NIOSSLCertificate].self)
        let isIPAddress = Self.isIPAddress(host)
        let bootstrap = ClientBootstrap(group: group)
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
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: address, port: port).get()
        } catch {
            presented.fail(error)
            throw CLIError("Could not connect to \(endpoint): \(error). Check the host, port and that the server is up.")
        }
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            presented.fail(CLIError("\(endpoint) did not complete a TLS handshake within \(timeout.nanoseconds / 1_000_000_000) s."))
        }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        let nioChain = try await presented.futureResult.get()
        let chain = try nioChain.map { try Certificate(derEncoded: try $0.toDERBytes()) }
        guard !chain.isEmpty else { throw CLIError("\(endpoint) presented no certificate.") }
        return chain
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    private static func validate(leaf: Certificate, intermediates: [Certificate], host: String, caFile: String?, endpoint: String) async throws {
        let isIPAddress = Self.isIPAddress(host)
        let roots: CertificateStore
        if let caFile {
            let bytes = try PinCommand.Add.read(caFile)
            roots = CertificateStore(try PinMaterial.certificates(fromFileContents: bytes, origin: caFile))
        } else {
            roots = CertificateStore.systemTrustRoots
        }
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIPAddress ? nil : host, serverIP: isIPAddress ? host : nil)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        if case .couldNotValidate(let failures) = result {
            let reasons = failures.map { String(describing: $0.policyFailureReason) }.joined(separator: "; ")
            throw CLIError("The chain presented by \(endpoint) does not validate (\(reasons.isEmpty ? "no path to a trusted root" : reasons)). Nothing was pinned. Pass --ca-file with the right CA, or --no-verify if you have checked the server by other means.")
        }
    }

    /// `ADDRESS` or `ADDRESS:PORT` (IPv6 in brackets); without a port, the endpoint's port is used.
    static func parseConnectTo(_ value: String, defaultPort: Int) throws -> (String, Int) {
        let usage = "Example: --connect-to 10.0.0.5:443, --connect-to 10.0.0.5 or --connect-to [2001:db8::5]:443"
        var rest = Substring(value)
        var address: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw CLIError("'\(value)' opens '[' without closing it. \(usage).") }
            address = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { throw CLIError("'\(value)' has text after ']' that is not ':PORT'. \(usage).") }
        } else if rest.filter({ $0 == ":" }).count > 1 {
            // A bare IPv6 address: its colons are not a port separator.
            address = rest
            rest = ""
        } else if let colon = rest.firstIndex(of: ":") {
            address = rest[..<colon]
            rest = rest[colon...]
        } else {
            address = rest
            rest = ""
        }
        guard !address.isEmpty else { throw CLIError("'\(value)' has no address. \(usage).") }
        guard address.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }) else {
            throw CLIError("'\(value)' is not an address or host name. \(usage).")
        }
        var port = defaultPort
        if rest.hasPrefix(":") {
            guard let parsed = Int(rest.dropFirst()), (1...65535).contains(parsed) else {
                throw CLIError("'\(value)' has a port that is not from 1 to 65535. \(usage).")
            }
            port = parsed
        }
        return (String(address), port)
    }

    static func parse(_ endpoint: String) throws -> (String, Int) {
        guard let colon = endpoint.lastIndex(of: ":"), let port = Int(endpoint[endpoint.index(after: colon)...]), (1...65535).contains(port) else {
            throw CLIError("'\(endpoint)' is not host:port. Example: --from-host api.example.com:443")
        }
        var host = String(endpoint[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw CLIError("'\(endpoint)' has no host name before the port.") }
        return (host, port)
    }
}
