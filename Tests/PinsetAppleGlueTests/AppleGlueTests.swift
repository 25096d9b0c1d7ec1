// Linux only: on Apple platforms the real frameworks exist and this target compiles to nothing.
#if PINSET_APPLE_SHIM
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

/// The Apple adapter's own source (Sources/PinsetClient/Apple), compiled here against Apple's exact signatures
/// (Shim/), driven through every path: what URLSession and Network.framework get back for each outcome of the
/// system evaluation and the pins. Apple's trust evaluation itself is not simulated: each test states it.
@Suite("Apple adapter glue")
struct AppleGlueTests {
    /// Pins for `api.example.com` (the intermediate's key), put in force by a real updater from a signed bundle,
    /// with pin-failure reports queued in the state directory.
    struct Fixture {
        let directory: TemporaryDirectory
        let updater: PinsetUpdater
        let root: TestPKI.Issued
        let intermediate: TestPKI.Issued
        let leaf: TestPKI.Issued
        let stranger: TestPKI.Issued
        let configuration: PinsetClientConfiguration

        init() async throws {
            directory = try TemporaryDirectory(prefix: "pinset-apple-glue")
            root = try TestPKI.certificateAuthority(commonName: "Glue Root")
            intermediate = try TestPKI.leaf(commonName: "Glue Intermediate", issuer: root, extensions: try .init {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            })
            leaf = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: intermediate)
            stranger = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: try TestPKI.certificateAuthority(commonName: "Other CA"))
            let identity = try TestPKI.signingIdentity()
            var configuration = try PinsetClientConfiguration(
                serverURL: URL(string: "https://trust.example.com/")!, customer: try CustomerName("acme"),
                trustAnchors: [identity.certificate], stateDirectory: directory.file("state")
            )
            configuration.failureReports = try PinFailureReportConfiguration(
                reportURL: URL(string: "http://127.0.0.1:9/report/acme")!, appBundleID: "com.example.app", appVersion: "1.0"
            )
            self.configuration = configuration
            updater = PinsetUpdater(configuration: configuration, reportSender: UnreachableSender())
            let now = Int64(Date().timeIntervalSince1970)
            let payload = BundlePayload(customer: try CustomerName("acme"), timestamp: now - 5, expires: now + 3600, version: 1, hosts: [
                PinnedHost(hostname: try Hostname("api.example.com"), port: 443, includeSubdomains: false,
                           spkiSHA256: [intermediate.spkiSHA256], certificateSHA256: [], subjectPublicKeyInfos: []),
            ])
            try await updater.seed(withBundle: try BundleSigner(identity: identity).sign(payload))
        }

        var pins: PinEvaluator { updater.evaluator }
        var pinnedChain: [[UInt8]] { [leaf.certificateDER, intermediate.certificateDER, root.certificateDER] }
        var strangerChain: [[UInt8]] { [stranger.certificateDER] }

        func challenge(host: String, trust: SecTrust?, method: String = NSURLAuthenticationMethodServerTrust) -> URLAuthenticationChallenge {
            let space: URLProtectionSpace = method == NSURLAuthenticationMethodServerTrust
                ? ServerTrustProtectionSpace(host: host, trust: trust)
                : URLProtectionSpace(host: host, port: 443, protocol: "https", realm: "api", authenticationMethod: method)
            return URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil, sender: IgnoringSender())
        }

        /// What URLSession gets back through the delegate protocol, session-level and task-level.
        func answers(_ delegate: PinsetURLSessionDelegate, _ challenge: URLAuthenticationChallenge) -> [(URLSession.AuthChallengeDisposition, URLCredential?)] {
            let session = URLSession(configuration: .ephemeral)
            defer { session.invalidateAndCancel() }
            let task = session.dataTask(with: URL(string: "https://api.example.com/")!)
            let answers = Answers()
            let asSession: any URLSessionDelegate = delegate
            asSession.urlSession(session, didReceive: challenge) { answers.add($0, $1) }
            let asTask: any URLSessionTaskDelegate = delegate
            asTask.urlSession(session, task: task, didReceive: challenge) { answers.add($0, $1) }
            return answers.all
        }

        /// The reports waiting in the queue file (`pending`: report JSON texts), by their host name.
        func queuedReports() -> [String] {
            guard let data = FileManager.default.contents(atPath: configuration.reportQueuePath),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let pending = object["pending"] as? [String] else { return [] }
            return pending.compactMap { text in
                (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["hostname"] as? String
            }
        }

        func remove() { directory.remove() }
    }

    @Test func aPinnedMatchingHostTheSystemTrustsGetsTheCredentialForItsTrust() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let trust = SecTrust(evaluatedChain: f.pinnedChain, verdict: .trusted)
        let answers = f.answers(PinsetURLSessionDelegate(pins: f.pins), f.challenge(host: "api.example.com", trust: trust))
        #expect(answers.count == 2)
        for (disposition, credential) in answers {
            #expect(disposition == .useCredential)
            #expect(credential.flatMap(TrustCredentials.trust(of:)) === trust)
        }
        // The SSL policy for exactly this host, on the client side, was set before the system evaluation.
        #expect(trust.policies.map(\.hostname) == ["api.example.com"])
        #expect(trust.policies.allSatisfy { $0.server })
    }

    @Test func aFailedSystemEvaluationIsCancelledWhateverThePins() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let trust = SecTrust(evaluatedChain: f.pinnedChain, verdict: .failed("certificate has expired"))
        for (disposition, credential) in f.answers(PinsetURLSessionDelegate(pins: f.pins), f.challenge(host: "api.example.com", trust: trust)) {
            #expect(disposition == .cancelAuthenticationChallenge)
            #expect(credential == nil)
        }
        let decision = PinsetSecTrust.evaluate(trust, host: "api.example.com", pins: f.pins)
        #expect(!decision.allowsConnection && "\(decision)".contains("certificate has expired"), "\(decision)")
    }

    @Test func aHostThatIsNotPinnedGetsDefaultHandling() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let trust = SecTrust(evaluatedChain: f.strangerChain, verdict: .trusted)
        for (disposition, credential) in f.answers(PinsetURLSessionDelegate(pins: f.pins), f.challenge(host: "www.example.org", trust: trust)) {
            #expect(disposition == .performDefaultHandling)
            #expect(credential == nil)
        }
    }

    @Test func aMismatchIsCancelledAndReported() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let trust = SecTrust(evaluatedChain: f.strangerChain, verdict: .trusted)
        for (disposition, _) in f.answers(PinsetURLSessionDelegate(pins: f.pins), f.challenge(host: "api.example.com", trust: trust)) {
            #expect(disposition == .cancelAuthenticationChallenge)
        }
        // The reporter queues the report in the state directory (its sender cannot reach the server).
        // Two evaluations (session and task level), one report per host and interval.
        for _ in 0..<1_500 where f.queuedReports().isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(f.queuedReports() == ["api.example.com"])
    }

    @Test func aTrustWithoutAChainOrWithoutATrustIsCancelled() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let delegate = PinsetURLSessionDelegate(pins: f.pins)
        for (disposition, _) in f.answers(delegate, f.challenge(host: "api.example.com", trust: SecTrust(evaluatedChain: [], verdict: .trusted))) {
            #expect(disposition == .cancelAuthenticationChallenge)
        }
        for (disposition, _) in f.answers(delegate, f.challenge(host: "api.example.com", trust: nil)) {
            #expect(disposition == .cancelAuthenticationChallenge)
        }
    }

    @Test func otherChallengesAreLeftToTheAppOrToDefaultHandling() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let delegate = PinsetURLSessionDelegate(pins: f.pins)
        let basic = f.challenge(host: "api.example.com", trust: nil, method: NSURLAuthenticationMethodHTTPBasic)
        let answers = Answers()
        #expect(!delegate.handle(challenge: basic) { answers.add($0, $1) })
        #expect(answers.all.isEmpty)
        #expect(f.answers(delegate, basic).map(\.0) == [.performDefaultHandling, .performDefaultHandling])
        let trust = SecTrust(evaluatedChain: f.pinnedChain, verdict: .trusted)
        #expect(delegate.handle(challenge: f.challenge(host: "api.example.com", trust: trust)) { answers.add($0, $1) })
        #expect(answers.all.map(\.0) == [.useCredential])
    }

    /// Network.framework calls the verify block once or more per connection: each call decides afresh.
    @Test func theNetworkVerifyBlockDecidesEveryTimeItIsCalled() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let options = PinsetSecTrust.tlsOptions(host: "api.example.com", pins: f.pins)
        let matching = SecTrust(evaluatedChain: f.pinnedChain, verdict: .trusted)
        #expect(options.securityProtocolOptions.runVerification(of: matching) == true)
        #expect(options.securityProtocolOptions.runVerification(of: matching) == true)
        #expect(matching.evaluations == 2)
        #expect(matching.policies.map(\.hostname) == ["api.example.com"])
        let mismatching = SecTrust(evaluatedChain: f.strangerChain, verdict: .trusted)
        #expect(options.securityProtocolOptions.runVerification(of: mismatching) == false)
        #expect(options.securityProtocolOptions.runVerification(of: mismatching) == false)
        let failing = SecTrust(evaluatedChain: f.pinnedChain, verdict: .failed("untrusted root"))
        #expect(options.securityProtocolOptions.runVerification(of: failing) == false)
        let empty = SecTrust(evaluatedChain: [], verdict: .trusted)
        #expect(options.securityProtocolOptions.runVerification(of: empty) == false)
    }

    /// A pinned host that renewed its key: the delegate cancels, `recoverAfterPinFailure(host:)` fetches the
    /// newer pins once, and a delegate for a new session (what the app must make before retrying) gives the
    /// credential; a second call fetches nothing.
    @Test func aRefusedHostRecoversThroughTheDelegateAndANewSessionTrustsIt() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        let identity = try TestPKI.signingIdentity()
        let directory = try TemporaryDirectory(prefix: "pinset-apple-recovery")
        defer { directory.remove() }
        let configuration = try PinsetClientConfiguration(
            serverURL: URL(string: "https://trust.example.com/")!, customer: try CustomerName("acme"),
            trustAnchors: [identity.certificate], stateDirectory: directory.file("state")
        )
        let now = Int64(Date().timeIntervalSince1970)
        func bundle(version: Int64, pinning key: TestPKI.Issued) throws -> [UInt8] {
            try BundleSigner(identity: identity).sign(BundlePayload(customer: try CustomerName("acme"), timestamp: now - 5, expires: now + 3600, version: version, hosts: [
                PinnedHost(hostname: try Hostname("api.example.com"), port: 443, includeSubdomains: false,
                           spkiSHA256: [key.spkiSHA256], certificateSHA256: [], subjectPublicKeyInfos: []),
            ]))
        }
        let server = CountingFetcher(body: try bundle(version: 2, pinning: f.stranger))
        let updater = PinsetUpdater(configuration: configuration, fetcher: server)
        try await updater.seed(withBundle: try bundle(version: 1, pinning: f.intermediate))
        let delegate = PinsetURLSessionDelegate(updater: updater)

        let renewedTrust = SecTrust(evaluatedChain: f.strangerChain, verdict: .trusted)
        #expect(delegate.disposition(for: f.challenge(host: "api.example.com", trust: renewedTrust)).0 == .cancelAuthenticationChallenge)
        #expect(await delegate.recoverAfterPinFailure(host: "api.example.com") == .retryWithNewPins(version: 2))
        #expect(server.count == 1)
        let retried = SecTrust(evaluatedChain: f.strangerChain, verdict: .trusted)
        #expect(PinsetURLSessionDelegate(updater: updater).disposition(for: f.challenge(host: "api.example.com", trust: retried)).0 == .useCredential)
        #expect(await delegate.recoverAfterPinFailure(host: "api.example.com") == .noRecordedFailure)
        #expect(server.count == 1)

        // A delegate made from the pins alone has no updater to ask.
        #expect(await PinsetURLSessionDelegate(pins: updater.evaluator).recoverAfterPinFailure(host: "api.example.com") == .noRecordedFailure)
    }

    /// The decision itself, in portable code: the system's verdict first, then the pins.
    @Test func theDecisionPutsTheSystemEvaluationFirst() async throws {
        let f = try await Fixture()
        defer { f.remove() }
        #expect(f.pins.decide(host: "api.example.com", systemEvaluation: .failure(PlatformTrustError("expired"))).allowsConnection == false)
        #expect(f.pins.decide(host: "api.example.com", systemEvaluation: .success([])).allowsConnection == false)
        guard case .trust = f.pins.decide(host: "api.example.com", systemEvaluation: .success(f.pinnedChain)) else {
            Issue.record("a validated chain with a pinned key must be trusted")
            return
        }
        guard case .defaultHandling = f.pins.decide(host: "other.example.com", systemEvaluation: .success(f.strangerChain)) else {
            Issue.record("an unpinned host is left to the system under the default policy")
            return
        }
        guard case .refuse(_, let evaluation?) = f.pins.decide(host: "api.example.com", systemEvaluation: .success(f.strangerChain)),
              case .pinMismatch = evaluation else {
            Issue.record("a mismatch must be refused with the pins' verdict")
            return
        }
    }
}

/// Collects what completion handlers were called with.
final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [(URLSession.AuthChallengeDisposition, URLCredential?)] = []
    func add(_ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        lock.withLock { answers.append((disposition, credential)) }
    }
    var all: [(URLSession.AuthChallengeDisposition, URLCredential?)] { lock.withLock { answers } }
}

/// URLAuthenticationChallenge needs a sender; the delegate answers through its completion handler instead.
final class IgnoringSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

/// A report sender whose server is never reachable: reports stay queued in the state directory.
struct UnreachableSender: PinFailureReportSender {
    struct Unreachable: Error {}
    func send(_ report: [UInt8], to url: URL, timeout: Duration) async throws -> Int { throw Unreachable() }
}

/// A trust server that serves one bundle and counts the fetches.
final class CountingFetcher: BundleFetcher, @unchecked Sendable {
    private let lock = NSLock()
    private let body: [UInt8]
    private var fetches = 0

    init(body: [UInt8]) { self.body = body }

    var count: Int { lock.withLock { fetches } }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        lock.withLock { fetches += 1 }
        return FetchedBundle(statusCode: 200, body: body)
    }
}
#endif
