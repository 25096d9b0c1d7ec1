#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// Two instances behind a real nginx, each signing with its own key under one offline root and sharing one
/// database, get new signers while a Pinset client polls every 100 ms and a legacy client verifies with
/// `openssl smime` in a loop: not one fetch or verification fails, and afterwards each instance signs with its
/// new certificate.
@Suite(.serialized) struct SignerRotationTests {
    /// A deployment moved to an offline root whose two instances each have a data directory of their own (their
    /// signer key and chain) and share the database.
    struct Deployment {
        let cli: PinsetCLI
        let rootDir: String
        var root: String { "\(rootDir)/root-cert.pem" }
        let instanceDirectories: [String]
        var signers = KnownSigners()
        let identities = OfflineRootTests()

        init() throws {
            let populated = try ServeEndToEndTests().populated()
            do {
                try self.init(populated)
            } catch {
                populated.remove()
                throw error
            }
        }

        private init(_ cli: PinsetCLI) throws {
            self.cli = cli
            rootDir = cli.directory.file("offline-root")
            let adopted = try identities.pinset(cli, ["root", "adopt", "--root-dir", rootDir])
            guard adopted.status == 0 else { throw Failure("root adopt: \(adopted.combined)") }
            // The root key goes offline: no instance can sign with it.
            guard unlink("\(cli.dataDir)/signing-key.pem") == 0 else { throw Failure("the adopted root key is not in \(cli.dataDir)") }
            instanceDirectories = ["instance-1", "instance-2"].map { cli.directory.file($0) }
            for (index, directory) in instanceDirectories.enumerated() {
                guard mkdir(directory, 0o700) == 0 else { throw Failure("mkdir \(directory) failed") }
                let certificate = try identities.issueAndInstall(cli, rootDir: rootDir, extra: ["--replace-trust-anchor", root], dataDir: directory)
                try signers.add(Self.label(instance: index, signer: 1), certificate: certificate)
            }
        }

        static func label(instance index: Int, signer: Int) -> String { "instance \(index + 1), signer \(signer)" }

        func start(_ index: Int, extraConfiguration: [String: Any] = [:]) throws -> RunningServer {
            try RunningServer(cli: cli, extraConfiguration: extraConfiguration.merging(["dataDirectory": instanceDirectories[index], "databasePath": cli.database]) { _, new in new })
        }

        /// request → issue → install of one instance's second signer; returns the certificate's path.
        func rotate(_ index: Int) throws -> String {
            try identities.issueAndInstall(cli, rootDir: rootDir, dataDir: instanceDirectories[index])
        }

        var rootDER: [UInt8] { get throws { try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(rootDir)/root-cert.der"))) } }
    }

    @available(macOS 15.0, iOS 18.0, *)
    @Test func rotatingTheSignersOfBothInstancesUnderLoadFailsNothing() async throws {
        var deployment = try Deployment()
        let cli = deployment.cli
        defer { cli.remove() }
        let instanceDirectories = deployment.instanceDirectories
        let servers = try instanceDirectories.indices.map { try deployment.start($0) }
        defer { for server in servers { server.stop() } }
        let nginx = try NginxLoadBalancer(upstreamPorts: servers.map(\.port), in: cli.directory, caching: false)
        defer { nginx.stop() }
        let bundleURL = "\(nginx.baseURL)/acme.json.signed"

        let rootDER = try deployment.rootDER
        let fetcher = RecordingFetcher()
        let updater = PinsetUpdater(configuration: try PinsetClientConfiguration(
            serverURL: try #require(URL(string: nginx.baseURL)), customer: try CustomerName("acme"),
            trustCertificates: [rootDER], stateDirectory: cli.directory.file("client-state")
        ), fetcher: fetcher)
        let legacyDirectory = cli.directory.file("legacy-client")
        #expect(mkdir(legacyDirectory, 0o700) == 0)
        let legacy = try LegacyGCXClient(anchorDER: rootDER, directory: legacyDirectory)

        let stop = StopFlag()
        let client = LoadRecord(), legacyRecord = LoadRecord()
        // The Pinset client polls on a thread of its own: on the shared pool, other tests' work would space its
        // rounds out (the legacy client's loop has a thread of its own too).
        let clientLoop = Task(executorPreference: OwnThreadExecutor(label: "pinset.test.rotation-client")) {
            for _ in 0..<3000 where !stop.isSet {
                do {
                    _ = try await updater.update()
                    client.accepted(fetcher.lastBody)
                } catch {
                    client.failed("\(error)")
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let legacyLoop = Task {
            try await Self.onOwnThread {
                for _ in 0..<6000 where !stop.isSet {
                    do {
                        let response = try CurlResponse.get(bundleURL, in: cli.directory)
                        guard response.status == 200 else {
                            legacyRecord.failed("HTTP \(response.status)")
                            continue
                        }
                        _ = try legacy.accept(bundle: response.body)
                        legacyRecord.accepted(response.body)
                    } catch {
                        legacyRecord.failed("\(error)")
                    }
                    usleep(20_000)
                }
            }
        }

        // The waits below are bounded only so that a broken rotation fails instead of hanging: on a busy machine
        // the loops' rounds take longer, and what counts is what the clients saw, not how soon.
        /// Whether, within a bounded wait, both clients accepted a bundle signed by `label`.
        func bothClientsSee(_ label: String) async throws -> Bool {
            let known = deployment.signers
            return try await Self.onOwnThread {
                let deadline = Date().addingTimeInterval(90)
                while Date() < deadline && !(client.hasSeen(label, among: known) && legacyRecord.hasSeen(label, among: known)) { usleep(50_000) }
                return client.hasSeen(label, among: known) && legacyRecord.hasSeen(label, among: known)
            }
        }
        /// Whether, within a bounded wait, both clients accepted `count` more bundles.
        func bothClientsAccept(_ count: Int) async throws -> Bool {
            let clientTarget = client.acceptedCount + count, legacyTarget = legacyRecord.acceptedCount + count
            return try await Self.onOwnThread {
                let deadline = Date().addingTimeInterval(120)
                while Date() < deadline && !(client.acceptedCount >= clientTarget && legacyRecord.acceptedCount >= legacyTarget) { usleep(50_000) }
                return client.acceptedCount >= clientTarget && legacyRecord.acceptedCount >= legacyTarget
            }
        }
        // Each phase (both old signers, one new, both new) runs under load for a while, not just until its
        // first bundle: the instances keep re-signing and the clients keep alternating between them for
        // `phaseBundles` more bundles each.
        let phaseBundles = 15
        // The rotation runs while both loops do; they are stopped and awaited whatever happens to it.
        let rotation: Result<Void, any Error>
        do {
            for label in deployment.signers.labels {
                let seen = try await bothClientsSee(label)
                #expect(seen, "before the rotation, both clients accept bundles of \(label)")
            }
            #expect(try await bothClientsAccept(phaseBundles), "both clients go on accepting bundles before the rotation")
            for index in instanceDirectories.indices {
                let certificate = try await Self.onOwnThread { [deployment] in try deployment.rotate(index) }
                let label = Deployment.label(instance: index, signer: 2)
                try deployment.signers.add(label, certificate: certificate)
                let seen = try await bothClientsSee(label)
                #expect(seen, "both clients accept bundles of \(label)")
                #expect(try await bothClientsAccept(phaseBundles), "both clients go on accepting bundles after \(label) signs")
            }
            rotation = .success(())
        } catch {
            rotation = .failure(error)
        }
        stop.set()
        await clientLoop.value
        try await legacyLoop.value
        try rotation.get()

        #expect(client.failures.isEmpty, "the Pinset client: \(client.failures)")
        #expect(legacyRecord.failures.isEmpty, "the legacy client: \(legacyRecord.failures)")
        #expect(client.acceptedCount >= 3 * phaseBundles && legacyRecord.acceptedCount >= 3 * phaseBundles, "\(client.acceptedCount) and \(legacyRecord.acceptedCount) bundles accepted")
        for record in [client, legacyRecord] {
            #expect(record.unattributed(among: deployment.signers) == 0, "every accepted bundle was signed by one of the instances' signers")
        }
        let lastSigner = deployment.signers.signer(of: Data(fetcher.lastBody))
        #expect(lastSigner?.hasSuffix("signer 2") == true, "the client's last bundle is signed by a new signer, not \(lastSigner ?? "none")")

        // Every instance answered every request itself: nginx skipped none (it would hide a 503 by retrying the other).
        let requests = nginx.accessLog()
        #expect(requests.count >= client.acceptedCount + legacyRecord.acceptedCount)
        let attempts = requests.flatMap(\.upstreams)
        #expect(requests.allSatisfy { $0.status == 200 } && attempts.allSatisfy { $0.status == "200" }, "\(requests.filter { $0.status != 200 || $0.upstreams.count != 1 })")
        #expect(Set(attempts.map(\.address)) == Set(servers.map { "127.0.0.1:\($0.port)" }), "nginx balanced across both instances")

        // Each instance now signs with its own new certificate, as OpenSSL reports the signer.
        for (index, server) in servers.enumerated() {
            let response = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
            #expect(response.status == 200)
            let bundle = try cli.directory.write("instance-\(index + 1).json.signed", response.body)
            let signerFile = cli.directory.file("instance-\(index + 1)-signer.pem")
            let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", deployment.root, "-no-CApath", "-no-CAstore",
                                                             "-purpose", "smimesign", "-signer", signerFile, "-out", "/dev/null"])
            #expect(verified.status == 0, "\(verified.stderr)")
            #expect(try deployment.signers.label(ofCertificate: signerFile) == Deployment.label(instance: index, signer: 2))
        }
        for server in servers { #expect(server.stop() == 0) }
    }

    /// The instance whose signer was replaced re-signs at once; another instance only at its next pass. A client
    /// that got the new signer's bundle from the first accepts the other's earlier bundle too: a new signer changes
    /// no pins, so it is no new content version that would make the earlier bundle look like a rollback.
    @Test func aClientAcceptsTheEarlierBundleOfAnInstanceThatHasNotReSignedYet() async throws {
        var deployment = try Deployment()
        let cli = deployment.cli
        defer { cli.remove() }
        let switching = try deployment.start(0)
        defer { switching.stop() }
        // Looks for changes once a minute: it serves what it signed at start for the whole test.
        let lagging = try deployment.start(1, extraConfiguration: ["changePollIntervalSeconds": 60])
        defer { lagging.stop() }
        let configuration = { (server: RunningServer) in
            try PinsetClientConfiguration(
                serverURL: try #require(URL(string: server.baseURL)), customer: try CustomerName("acme"),
                trustCertificates: [try deployment.rootDER], stateDirectory: cli.directory.file("client-state")
            )
        }
        let before = try await PinsetUpdater(configuration: configuration(switching)).update()

        let label = Deployment.label(instance: 0, signer: 2)
        try deployment.signers.add(label, certificate: try deployment.rotate(0))
        var served = try CurlResponse.get("\(switching.baseURL)/acme.json.signed", in: cli.directory)
        for _ in 0..<100 where deployment.signers.signer(of: Data(served.body)) != label {
            try await Task.sleep(for: .milliseconds(100))
            served = try CurlResponse.get("\(switching.baseURL)/acme.json.signed", in: cli.directory)
        }
        #expect(deployment.signers.signer(of: Data(served.body)) == label, "the instance signs with its new signer without a restart")
        let fromSwitched = try await PinsetUpdater(configuration: configuration(switching)).update()
        #expect(fromSwitched.version == before.version, "a new signer is no new content version")

        let laggingBundle = try CurlResponse.get("\(lagging.baseURL)/acme.json.signed", in: cli.directory)
        #expect(deployment.signers.signer(of: Data(laggingBundle.body)) == Deployment.label(instance: 1, signer: 1), "the other instance has not re-signed")
        // Like an app restarted behind the load balancer: the stored pins came from the switched instance.
        let fromLagging = try await PinsetUpdater(configuration: configuration(lagging)).update()
        #expect(fromLagging.version == fromSwitched.version && fromLagging.contentDigest == fromSwitched.contentDigest)
        #expect(switching.stop() == 0 && lagging.stop() == 0)
    }

    /// Runs blocking work (child processes, polling waits) on a thread of its own: Swift's cooperative pool has
    /// one thread per core, and the Pinset client's polling needs them.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

/// The signer certificates issued in a test, by label. Pinset embeds the signer certificate and its chain, and
/// both clients verify the signature before a bundle counts, so the one signer certificate a counted bundle
/// embeds is the one that signed it.
struct KnownSigners: Sendable {
    private var certificates: [(label: String, der: Data)] = []

    var labels: [String] { certificates.map(\.label) }

    mutating func add(_ label: String, certificate pemPath: String) throws {
        certificates.append((label, try Self.der(of: pemPath)))
    }

    func signer(of bundle: Data) -> String? {
        let embedded = certificates.filter { bundle.range(of: $0.der) != nil }
        return embedded.count == 1 ? embedded[0].label : nil
    }

    func label(ofCertificate pemPath: String) throws -> String? {
        let der = try Self.der(of: pemPath)
        return certificates.first { $0.der == der }?.label
    }

    static func der(of pemPath: String) throws -> Data {
        let converted = try ProcessRunner.run("openssl", ["x509", "-in", pemPath, "-outform", "der"])
        guard converted.status == 0 else { throw Failure("openssl x509 \(pemPath): \(converted.stderr)") }
        return Data(converted.stdout)
    }
}

/// The real `URLSessionBundleFetcher`, keeping the last body so that the test can tell which signer signed
/// what the client accepted.
final class RecordingFetcher: BundleFetcher, @unchecked Sendable {
    // `@unchecked Sendable`: `body` is only touched under `lock`.
    private let fetcher = URLSessionBundleFetcher()
    private let lock = NSLock()
    private var body: [UInt8] = []

    var lastBody: [UInt8] { lock.withLock { body } }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        let fetched = try await fetcher.fetch(from: url, timeout: timeout, maximumBodySize: maximumBodySize)
        lock.withLock { body = fetched.body }
        return fetched
    }
}

/// What one client's loop saw: the distinct bundles it accepted, how often, and every failure with its reason.
/// Bundles are attributed to signers when asked, so a bundle of a signer the test has not labelled yet counts too.
final class LoadRecord: @unchecked Sendable {
    // `@unchecked Sendable`: every property is only touched under `lock`.
    private let lock = NSLock()
    private var bundles: [Data: Int] = [:]
    private var failed: [String] = []

    func accepted(_ bundle: [UInt8]) { lock.withLock { bundles[Data(bundle), default: 0] += 1 } }
    func failed(_ reason: String) { lock.withLock { failed.append(reason) } }

    func hasSeen(_ signer: String, among known: KnownSigners) -> Bool {
        lock.withLock { bundles.keys.contains { known.signer(of: $0) == signer } }
    }

    /// Accepted bundles none of `known` signed.
    func unattributed(among known: KnownSigners) -> Int {
        lock.withLock { bundles.filter { known.signer(of: $0.key) == nil }.values.reduce(0, +) }
    }

    var acceptedCount: Int { lock.withLock { bundles.values.reduce(0, +) } }
    var failures: [String] { lock.withLock { failed } }
}

/// Tells the load loops to finish their current round and end.
final class StopFlag: @unchecked Sendable {
    // `@unchecked Sendable`: `stopped` is only touched under `lock`.
    private let lock = NSLock()
    private var stopped = false

    var isSet: Bool { lock.withLock { stopped } }
    func set() { lock.withLock { stopped = true } }
}
