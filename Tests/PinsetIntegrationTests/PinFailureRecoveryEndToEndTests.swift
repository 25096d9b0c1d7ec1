import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// Recovery after a pin failure through the real parts: `openssl s_server` presents the chain, the client's trust
/// evaluator refuses it, `PinsetUpdater.recoverAfterPinFailure(host:)` forces an update from a real
/// `pinset serve`, and the retry is a new connection. Fetches are counted by the server (`/status` uptake: the
/// fetches that told the version held, which only the client library sends).
@Suite(.serialized) struct PinFailureRecoveryEndToEndTests {
    /// Customer `acme` pinning api.example.com to a CA-issued leaf and a backup key, served by `pinset serve`, and
    /// an app holding those pins.
    struct Setup {
        let cli: PinsetCLI
        let server: RunningServer
        let state: TemporaryDirectory
        let authority: TestPKI.Issued
        let genuine: TestPKI.Issued
        let updater: PinsetUpdater
        let trust: ServerTrustEvaluator
        let held: VerifiedPinSet

        init() async throws {
            cli = try PinsetCLI.initialized()
            authority = try TestPKI.certificateAuthority()
            genuine = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: authority)
            #expect(try cli.run(["customer", "add", "acme"]).status == 0)
            #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
            let genuinePath = try cli.directory.write("genuine.pem", genuine.certificatePEM)
            let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                                     "--certificate", genuinePath, "--hash", PinsetCLI.backupPin])
            #expect(added.status == 0, "\(added.combined)")
            server = try RunningServer(cli: cli)
            state = try TemporaryDirectory(prefix: "pinset-recovery-state")
            updater = PinsetUpdater(configuration: try cli.acmeClientConfiguration(server: server, stateDirectory: state))
            held = try await updater.update()
            trust = ServerTrustEvaluator(pins: updater.evaluator, trustRoots: try TLSTrustRoots(certificateFiles: [Array(authority.certificatePEM.utf8)]))
        }

        /// `openssl s_server` presenting `leaf` for api.example.com; stop it by its pid.
        func serveTLS(_ leaf: TestPKI.Issued, name: String) throws -> (process: BackgroundProcess, port: Int) {
            let cert = try cli.directory.write("\(name).pem", leaf.certificatePEM)
            let key = try cli.directory.write("\(name).key", leaf.privateKeyPEM, mode: 0o600)
            let port = try FreePort.pick()
            let process = try BackgroundProcess("openssl", ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-www", "-quiet"],
                                                logDirectory: cli.directory.path, name: "s_server-\(name)")
            #expect(FreePort.waitUntilListening(port: port))
            return (process, port)
        }

        /// A new TLS connection to `port` (`openssl s_client`), its chain evaluated as the app does.
        func connect(port: Int) async throws -> Result<PinEvaluation, ServerTrustError> {
            let presented = try ClientFailureReportTests.presentedChain(port: port)
            return await trust.evaluate(serverHostname: "api.example.com", presentedChain: presented).map { $0.evaluation }
        }

        func clientFetches() throws -> Int { try PinFailureRecoveryEndToEndTests.clientFetches(from: server, cli: cli) }

        func stop() {
            server.stop()
            state.remove()
            cli.remove()
        }
    }

    /// The fetches of `acme`'s bundle that sent `Pinset-Version` (the client library's, once it holds pins),
    /// as the server counted them.
    static func clientFetches(from server: RunningServer, cli: PinsetCLI) throws -> Int {
        let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])
        let customers = (report["uptake"] as? [String: Any])?["customers"] as? [String: Any]
        return (customers?["acme"] as? [String: Any])?["fetchesReportingVersion"] as? Int ?? 0
    }

    @Test func aRenewedKeyFailsOnceThenOneForcedUpdateAndTheRetrySucceed() async throws {
        let s = try await Setup()
        defer { s.stop() }
        // The host renewed its key, and the operator published the new pin before the app fetched it.
        let renewed = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: s.authority)
        let renewedPath = try s.cli.directory.write("renewed-pin.pem", renewed.certificatePEM)
        let added = try s.cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", renewedPath])
        #expect(added.status == 0, "\(added.combined)")
        var published = try s.server.verifiedVersion(of: "acme", trustedBy: s.cli) ?? 0
        for _ in 0..<240 where published <= Int(s.held.version) {
            try await Task.sleep(for: .milliseconds(250))
            published = try s.server.verifiedVersion(of: "acme", trustedBy: s.cli) ?? 0
        }
        #expect(published > Int(s.held.version))
        let tls = try s.serveTLS(renewed, name: "renewed")
        defer { tls.process.stop() }

        guard case .failure(let refusal) = try await s.connect(port: tls.port), refusal.code == .pinMismatch else {
            Issue.record("the first connection must fail on the pins the app holds")
            return
        }
        let before = try s.clientFetches()
        let outcome = await s.updater.recoverAfterPinFailure(host: "api.example.com")
        #expect(outcome == .retryWithNewPins(version: Int64(published)), "\(outcome)")
        #expect(try s.clientFetches() == before + 1)
        guard case .success(.pinnedMatch) = try await s.connect(port: tls.port) else {
            Issue.record("the retry on a new connection must pass")
            return
        }
    }

    @Test func aManInTheMiddleKeyForcesOneUpdatePerIntervalAndNeverSucceeds() async throws {
        let s = try await Setup()
        defer { s.stop() }
        let intercepting = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: s.authority)
        let tls = try s.serveTLS(intercepting, name: "intercepting")
        defer { tls.process.stop() }
        let before = try s.clientFetches()

        guard case .failure(let first) = try await s.connect(port: tls.port), first.code == .pinMismatch else {
            Issue.record("a key never pinned must be refused")
            return
        }
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .pinsStillRefuse)
        #expect(try s.clientFetches() == before + 1)

        // The app retries anyway, and fails again within the interval: answered without a fetch.
        guard case .failure(let second) = try await s.connect(port: tls.port), second.code == .pinMismatch else {
            Issue.record("a key never pinned must be refused")
            return
        }
        let throttled = await s.updater.recoverAfterPinFailure(host: "api.example.com")
        guard case .throttled(let retryAfter) = throttled else {
            Issue.record("a second failure within the interval must be throttled: \(throttled)")
            return
        }
        #expect(retryAfter > .zero && retryAfter <= .seconds(60))
        #expect(try s.clientFetches() == before + 1)
        guard case .failure = try await s.connect(port: tls.port) else {
            Issue.record("the intercepting key must never pass")
            return
        }
        #expect(await s.updater.currentPinSet?.version == s.held.version)
    }

    /// A forced update that reaches another trust server (one the app does not trust) gets a bundle that pins the
    /// intercepting key: refused, and the pins held stay in force.
    @Test func aForcedUpdateWithAnUnverifiableBundleKeepsTheHeldPins() async throws {
        let s = try await Setup()
        defer { s.stop() }
        let intercepting = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: s.authority)
        let impostor = try PinsetCLI.initialized()
        defer { impostor.remove() }
        #expect(try impostor.run(["customer", "add", "acme"]).status == 0)
        #expect(try impostor.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let interceptingPath = try impostor.directory.write("intercepting-pin.pem", intercepting.certificatePEM)
        let pinned = try impostor.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                                       "--certificate", interceptingPath, "--hash", PinsetCLI.backupPin])
        #expect(pinned.status == 0, "\(pinned.combined)")
        let impostorServer = try RunningServer(cli: impostor)
        defer { impostorServer.stop() }

        // The same app (same state directory and trust certificate), its trust-server address redirected.
        var configuration = s.updater.configuration
        configuration.serverURL = try #require(URL(string: impostorServer.baseURL))
        let redirected = PinsetUpdater(configuration: configuration)
        guard case .loaded(let held) = await redirected.loadStoredPins() else {
            Issue.record("the stored pins must load")
            return
        }
        let trust = ServerTrustEvaluator(pins: redirected.evaluator, trustRoots: s.trust.trustRoots)
        let tls = try s.serveTLS(intercepting, name: "intercepting")
        defer { tls.process.stop() }
        let presented = try ClientFailureReportTests.presentedChain(port: tls.port)
        guard case .failure(let refusal) = await trust.evaluate(serverHostname: "api.example.com", presentedChain: presented), refusal.code == .pinMismatch else {
            Issue.record("a key never pinned must be refused")
            return
        }
        let outcome = await redirected.recoverAfterPinFailure(host: "api.example.com")
        guard case .updateFailed(let error) = outcome, case .signature = error.code else {
            Issue.record("a bundle from another trust server must be refused: \(outcome)")
            return
        }
        #expect(try Self.clientFetches(from: impostorServer, cli: impostor) == 1)
        #expect(await redirected.currentPinSet == held)
        guard case .failure = await trust.evaluate(serverHostname: "api.example.com", presentedChain: presented) else {
            Issue.record("the intercepting key must still be refused")
            return
        }
    }
}
