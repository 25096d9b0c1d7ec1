import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PinsetClient
import PinsetCore
import PinsetNIOSSL
import PinsetTestSupport
import Testing

/// Real TLS handshakes on loopback: a server presenting certificate A (the genuine one) or B (a
/// man-in-the-middle certificate from the same CA, so normal validation accepts both).
@Suite("NIOSSL pinning over real TLS")
struct NIOSSLPinningTests {
    /// Sends a ping once connected and completes when the server's echo arrives — which it can only after
    /// the handshake succeeded — or fails with the first error.
    private final class HandshakeObserver: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let promise: EventLoopPromise<Void>

        init(promise: EventLoopPromise<Void>) { self.promise = promise }

        func channelActive(context: ChannelHandlerContext) {
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: "ping")), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            promise.succeed(())
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(TimedOut(what: "the connection closed before the handshake"))
            context.fireChannelInactive()
        }
    }

    /// Sends back whatever arrives, so the client knows the handshake is done.
    private final class Echo: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(data, promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    private static func startServer(group: any EventLoopGroup, presenting certificate: TestPKI.Issued) async throws -> any Channel {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: certificate.certificateDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificate.privateKeyPEM.utf8), format: .pem))
        )
        let context = try NIOSSLContext(configuration: configuration)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(Echo())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// Connects to `server` as "localhost" with pinning and returns how the handshake ended.
    private static func handshake(group: any EventLoopGroup, server: any Channel, pinning: NIOSSLPinning) async throws -> Result<Void, any Error> {
        let port = try #require(server.localAddress?.port)
        let sslContext = try NIOSSLContext(configuration: .makeClientConfiguration())
        let promise = group.next().makePromise(of: Void.self)
        let client = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addPinnedTLSClientHandlers(context: sslContext, serverHostname: "localhost", pinning: pinning)
                    try channel.pipeline.syncOperations.addHandler(HandshakeObserver(promise: promise))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        let outcome: Result<Void, any Error>
        do {
            try await value(of: promise.futureResult, within: 15, "the TLS handshake")
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? await client.close()
        return outcome
    }

    @Test func pinMismatchFailsTheHandshakeUntilAnUpdatePinsTheNewCertificate() async throws {
        let authority = try TestPKI.certificateAuthority(commonName: "Loopback Test CA")
        let genuine = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], issuer: authority)
        let intercepting = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], issuer: authority)

        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(version: 1, hosts: [try ClientFixture.host("localhost", keys: [genuine])]))
        let pinning = NIOSSLPinning(pins: updater.evaluator, trustRoots: TLSTrustRoots(certificates: [authority.certificate]))

        try await withEventLoopGroup { group in
            let serverA = try await Self.startServer(group: group, presenting: genuine)
            let serverB = try await Self.startServer(group: group, presenting: intercepting)
            do {
                // A: valid chain, pinned key: connects.
                try await Self.handshake(group: group, server: serverA, pinning: pinning).get()

                // B: valid chain from the same CA, but not the pinned key: refused, and the error says why.
                let refused = try await Self.handshake(group: group, server: serverB, pinning: pinning)
                let error = try #require(throws: ServerTrustError.self) { try refused.get() }
                #expect(error.code == .pinMismatch)
                guard case .pinMismatch(let host, _, let presented, _) = error.evaluation else {
                    Issue.record("no pin verdict in \(error)")
                    throw error
                }
                #expect(host == "localhost")
                #expect(presented.first == intercepting.spkiSHA256)

                // The trust server now pins B; the next handshake to B succeeds and A is refused.
                try await fixture.update(updater, with: try fixture.payload(version: 2, hosts: [try ClientFixture.host("localhost", keys: [intercepting])]))
                try await Self.handshake(group: group, server: serverB, pinning: pinning).get()
                let refusedA = try await Self.handshake(group: group, server: serverA, pinning: pinning)
                #expect(throws: ServerTrustError(.pinMismatch, "")) { try refusedA.get() }
            } catch {
                try? await serverA.close()
                try? await serverB.close()
                throw error
            }
            try await serverA.close()
            try await serverB.close()
        }
    }

    /// The server renewed its key and the trust server already publishes it: the first handshake is refused,
    /// one forced update brings the new pins, and the one retry (a new connection) succeeds.
    @Test func aRenewedKeyIsRecoveredByOneForcedUpdateAndOneRetry() async throws {
        let authority = try TestPKI.certificateAuthority(commonName: "Loopback Test CA")
        let retired = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], issuer: authority)
        let renewed = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], issuer: authority)
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(version: 1, hosts: [try ClientFixture.host("localhost", keys: [retired])]))
        fixture.fetcher.serve(try fixture.signed(try fixture.payload(version: 2, hosts: [try ClientFixture.host("localhost", keys: [renewed, retired])])))
        let fetchesBefore = fixture.fetcher.requestedURLs.count
        let pinning = NIOSSLPinning(updater: updater, trustRoots: TLSTrustRoots(certificates: [authority.certificate]))

        try await withEventLoopGroup { group in
            let server = try await Self.startServer(group: group, presenting: renewed)
            var handshakes = 0
            var outcome: Result<Void, any Error> = .success(())
            do {
                try await pinning.withPinFailureRecovery(serverHostname: "localhost") {
                    handshakes += 1
                    try await Self.handshake(group: group, server: server, pinning: pinning).get()
                }
            } catch {
                outcome = .failure(error)
            }
            try? await server.close()
            try outcome.get()
            #expect(handshakes == 2)
        }
        #expect(fixture.fetcher.requestedURLs.count == fetchesBefore + 1)
        #expect(await updater.currentPinSet?.version == 2)
    }

    /// A man-in-the-middle key: one forced update, no retry, the original error; within the interval the next
    /// failure fetches nothing.
    @Test func aManInTheMiddleKeyIsNeverRetriedAndForcesOneUpdatePerInterval() async throws {
        let authority = try TestPKI.certificateAuthority(commonName: "Loopback Test CA")
        let genuine = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], issuer: authority)
        let intercepting = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], issuer: authority)
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(version: 1, hosts: [try ClientFixture.host("localhost", keys: [genuine])]))
        let fetchesBefore = fixture.fetcher.requestedURLs.count
        let pinning = NIOSSLPinning(updater: updater, trustRoots: TLSTrustRoots(certificates: [authority.certificate]))

        try await withEventLoopGroup { group in
            let server = try await Self.startServer(group: group, presenting: intercepting)
            var handshakes = 0
            for _ in 0..<2 {
                var outcome: Result<Void, any Error> = .success(())
                do {
                    try await pinning.withPinFailureRecovery(serverHostname: "localhost") {
                        handshakes += 1
                        try await Self.handshake(group: group, server: server, pinning: pinning).get()
                    }
                } catch {
                    outcome = .failure(error)
                }
                #expect(throws: ServerTrustError(.pinMismatch, "")) { try outcome.get() }
            }
            try? await server.close()
            #expect(handshakes == 2, "one handshake per call: no retry")
        }
        #expect(fixture.fetcher.requestedURLs.count == fetchesBefore + 1)
    }

    @Test func certificateFromAnUntrustedCAIsRefusedEvenWhenPinned() async throws {
        let trusted = try TestPKI.certificateAuthority(commonName: "Trusted CA")
        let rogue = try TestPKI.certificateAuthority(commonName: "Rogue CA")
        let leaf = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], issuer: rogue)

        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(hosts: [try ClientFixture.host("localhost", keys: [leaf])]))
        let pinning = NIOSSLPinning(pins: updater.evaluator, trustRoots: TLSTrustRoots(certificates: [trusted.certificate]))

        try await withEventLoopGroup { group in
            let server = try await Self.startServer(group: group, presenting: leaf)
            let result = try await Self.handshake(group: group, server: server, pinning: pinning)
            try? await server.close()
            #expect(throws: ServerTrustError(.chainValidation, "")) { try result.get() }
        }
    }

    @Test func unpinnedHostConnectsOnNormalValidationAlone() async throws {
        let authority = try TestPKI.certificateAuthority(commonName: "Loopback Test CA")
        let leaf = try TestPKI.leaf(commonName: "localhost", dnsNames: ["localhost"], issuer: authority)
        let pinning = NIOSSLPinning(pins: PinEvaluator(), trustRoots: TLSTrustRoots(certificates: [authority.certificate]))
        try await withEventLoopGroup { group in
            let server = try await Self.startServer(group: group, presenting: leaf)
            let result = try await Self.handshake(group: group, server: server, pinning: pinning)
            try? await server.close()
            try result.get()
        }
    }
}
