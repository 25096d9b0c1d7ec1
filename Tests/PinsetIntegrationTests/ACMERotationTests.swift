import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// Key pre-rotation through `pinset acme` and the certbot and lego shims of deploy/acme with real parts on loopback:
/// Debian's pebble issues, Debian's certbot and lego request, nginx serves the certificate, `pinset serve` signs the pins, and an app-like client
/// (the real `PinsetUpdater` fetching from it, the real `ServerTrustEvaluator` over the chain the TLS server
/// presents) connects every 100 ms with its pins enforced. Nothing leaves 127.0.0.1.
///
/// The server's settings open the rotation gate about 61 s after a key is pinned (resign 1 s + content staleness
/// 0 s + freshness 60 s + max-age 0 s, and 95 % of the last minute's fetches holding it), the rule the production defaults apply
/// over about twenty minutes and an hour of uptake.
@Suite(.serialized) struct ACMERotationTests {
    /// Connections the app makes with each live key, at least: about every 100 ms while a gate takes a minute.
    static let connectionsPerKey = 20

    @available(macOS 15.0, iOS 18.0, *)
    @Test func renewalsByLegoThenCertbotWithNewKeysNeverFailAPinnedConnection() async throws {
        let bed = try ACMERotationTestbed()
        defer { bed.stop() }
        let app = try await PinnedApp.start(bed)
        var stopped = false
        defer { if !stopped { app.stopNow() } }

        // The first next key, pinned before any renewal may use it.
        let bootstrap = try await bed.acme(["bootstrap"])
        #expect(bootstrap.status == 0, "\(bootstrap.combined)")
        var liveKeys = [bed.initialKeyHash]
        var nextKey = try bed.stateNextKeyHash()
        #expect(try bed.pins() == pinned([bed.initialKeyHash: false, nextKey: true]))

        // One renewal per client: the second starts from the state the first left, so the key pinned by one
        // client's hook goes live through the other's.
        for client in [ACMEClient.lego, .certbot] {
            try await bed.waitForGate(key: nextKey)
            // The app has been connecting on the live certificate meanwhile (the gate's minute is plenty; the bound
            // only matters on a machine so busy that the app's rounds slow down).
            #expect(try await app.waitForConnections(with: liveKeys.last!, count: Self.connectionsPerKey), "before the \(client) renewal")
            let renewal = try await bed.renew(client)
            #expect(renewal.status == 0, "\(client) renewal: \(renewal.combined)")
            #expect(!renewal.combined.contains("PRIVATE KEY"), "key material in the output")
            // The certificate went live with the key pinned at the previous renewal.
            #expect(try bed.deployedLeafHash() == nextKey, "\(client) renewal: \(renewal.combined)")
            #expect(try await bed.servedLeafHash() == nextKey)
            // The key for the following renewal is pinned as next; the old live key is retired.
            let following = try bed.stateNextKeyHash()
            #expect(following != nextKey && !liveKeys.contains(following), "\(client) renewal: \(renewal.combined)")
            #expect(try bed.pins() == pinned([nextKey: false, following: true]), "after the \(client) renewal: \((try? bed.pins()) ?? [:]), next \(nextKey), following \(following): \(renewal.combined)")
            // Nothing left over: no pending key, rollback copy, used CSR or certbot output directory.
            let leftOver = try bed.stateFiles().filter { ["pending.key", "pending.pub", "rollback.crt", "rollback.key", "next.csr"].contains($0) || $0.hasPrefix("certbot.") }
            #expect(leftOver.isEmpty, "\(leftOver)")
            #expect(try bed.mode(of: bed.stateNextKey) == 0o600)
            #expect(try bed.mode(of: bed.keyFile) == 0o600)
            liveKeys.append(nextKey)
            nextKey = following
        }

        // The app keeps connecting for a while on the last certificate.
        #expect(try await app.waitForConnections(with: liveKeys.last!, count: Self.connectionsPerKey), "after the last renewal")
        let report = await app.stop()
        stopped = true
        #expect(report.failures.isEmpty, "pinned connections refused: \(report.failures.prefix(5))")
        #expect(report.unreachable.isEmpty, "TLS server not answering: \(report.unreachable.prefix(5))")
        // Every certificate in turn, not just the first and the last, served the app again and again.
        #expect(liveKeys.allSatisfy { report.connections[$0, default: 0] >= Self.connectionsPerKey },
                "the app connected with keys \(report.connections), expected at least \(Self.connectionsPerKey) times each of \(liveKeys)")
        // Only the live key and the next key remain pinned.
        #expect(try bed.pins() == pinned([liveKeys.last!: false, nextKey: true]))
    }

    @available(macOS 15.0, iOS 18.0, *)
    @Test func aRenewalWithAKeyThatWasNeverPinnedIsRefusedBeforeDeploying() async throws {
        let bed = try ACMERotationTestbed()
        defer { bed.stop() }
        let app = try await PinnedApp.start(bed)
        var stopped = false
        defer { if !stopped { app.stopNow() } }
        let deployedBefore = try bed.deployedFiles()

        // A key no pin knows, where the next key belongs (restored from a wrong backup, say).
        try FileManager.default.createDirectory(atPath: bed.stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try bed.generateKey(at: bed.stateNextKey)
        let unpinned = try bed.stateNextKeyHash()

        // Through the lego shim: refused at the gate, so nothing is even requested from the CA.
        let refused = try await bed.renew(.lego)
        #expect(refused.status == 4, "\(refused.combined)")
        #expect(refused.stderr.contains("is not a next pin of \(ACMERotationTestbed.hostname)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was issued or deployed"))
        #expect(!FileManager.default.fileExists(atPath: "\(bed.stateDirectory)/lego"), "lego ran")

        // lego run by hand with a CSR of that key and the deploy hook: issued, but the hook refuses to install it.
        let (direct, issued) = try await bed.legoDirect(csrFromKey: bed.stateNextKey)
        #expect(direct.status != 0, "\(direct.combined)")
        #expect(direct.combined.contains("is not a next pin of \(ACMERotationTestbed.hostname)"), "\(direct.combined)")
        #expect(direct.combined.contains("a certificate with this key would lock apps out"), "\(direct.combined)")
        // Had it been deployed, the app would have refused it: a valid chain from the same CA, an unpinned key.
        #expect(try await app.evaluate(chainFile: issued) == .pinMismatch)

        // Nothing changed: the same files, the same served key, the same pins (no next key pinned on the way).
        #expect(try bed.deployedFiles() == deployedBefore)
        #expect(try await bed.servedLeafHash() == bed.initialKeyHash)
        #expect(try bed.pins() == [bed.initialKeyHash: false])
        #expect(try bed.pins()[unpinned] == nil)
        // The app goes on connecting to the unchanged host.
        try await app.waitForProbes(20)
        let report = await app.stop()
        stopped = true
        #expect(report.failures.isEmpty, "\(report.failures.prefix(5))")
        #expect(report.keysSeen == [bed.initialKeyHash])
        #expect(report.probes >= 20)
    }

    @available(macOS 15.0, iOS 18.0, *)
    @Test func aRenewalBeforeTheGateOpensIsRefusedBeforeDeploying() async throws {
        let bed = try ACMERotationTestbed()
        defer { bed.stop() }
        let app = try await PinnedApp.start(bed)
        var stopped = false
        defer { if !stopped { app.stopNow() } }
        let deployedBefore = try bed.deployedFiles()

        let bootstrap = try await bed.acme(["bootstrap"])
        #expect(bootstrap.status == 0, "\(bootstrap.combined)")
        let next = try bed.stateNextKeyHash()

        // Through the certbot shim: the gate says not yet, so certbot is not even started.
        let refused = try await bed.renew(.certbot)
        #expect(refused.status == 3, "\(refused.combined)")
        #expect(refused.stderr.contains("is pinned but not yet safe to go live"), "\(refused.stderr)")
        #expect(refused.stderr.contains("published too recently"), "pinset's reason is shown: \(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(bed.stateDirectory)/certbot"), "certbot ran")
        #expect(!FileManager.default.fileExists(atPath: "\(bed.stateDirectory)/next.csr"))

        // lego run by hand with a CSR of the next key and the deploy hook: the hook checks the gate again.
        let (direct, _) = try await bed.legoDirect(csrFromKey: bed.stateNextKey)
        #expect(direct.status != 0, "\(direct.combined)")
        #expect(direct.combined.contains("is pinned but not yet safe to go live"), "\(direct.combined)")

        #expect(try bed.deployedFiles() == deployedBefore)
        #expect(try await bed.servedLeafHash() == bed.initialKeyHash)
        #expect(try bed.pins() == pinned([bed.initialKeyHash: false, next: true]))
        #expect(try bed.stateNextKeyHash() == next)
        // Still closed: the refusals above were the gate's, not a late opening.
        #expect(try bed.gateStatus(key: next) == 3)
        try await app.waitForProbes(20)
        let report = await app.stop()
        stopped = true
        #expect(report.failures.isEmpty, "\(report.failures.prefix(5))")
        #expect(report.keysSeen == [bed.initialKeyHash])
        #expect(report.probes >= 20)
    }

    @available(macOS 15.0, iOS 18.0, *)
    @Test func aGateStillClosedNearExpiryRenewsWithTheLiveKeyAndPostponesTheRotation() async throws {
        let bed = try ACMERotationTestbed()
        defer { bed.stop() }
        let app = try await PinnedApp.start(bed)
        var stopped = false
        defer { if !stopped { app.stopNow() } }
        let deployedBefore = try bed.deployedFiles()
        let leafBefore = try bed.deployedLeaf()

        // The next key was just pinned: the gate stays closed for the whole test.
        let bootstrap = try await bed.acme(["bootstrap"])
        #expect(bootstrap.status == 0, "\(bootstrap.combined)")
        let next = try bed.stateNextKeyHash()

        // pebble's certificates last about five years, so with PINSET_ACME_REUSE_DAYS at ten years the first one
        // counts as expiring: the lego shim renews with the live key instead of refusing.
        let renewal = try await bed.renew(.lego, environment: ["PINSET_ACME_REUSE_DAYS": "3650"])
        #expect(renewal.status == 6, "\(renewal.combined)")
        #expect(renewal.stderr.contains("Renewing with the LIVE key \(bed.initialKeyHash)"), "\(renewal.stderr)")
        #expect(renewal.stderr.contains("published too recently"), "pinset's reason is shown: \(renewal.stderr)")
        #expect(renewal.stderr.contains("the key rotation is postponed"), "\(renewal.stderr)")
        #expect(renewal.combined.contains("Rotation postponed: no key was retired or added"), "the deploy hook's warning: \(renewal.combined)")
        #expect(!renewal.combined.contains("PRIVATE KEY"), "key material in the output")
        #expect(FileManager.default.fileExists(atPath: "\(bed.stateDirectory)/lego"), "lego did not run")

        // A new certificate with the same key: the chain replaced, the key file untouched.
        let deployedAfter = try bed.deployedFiles()
        let leafAfter = try bed.deployedLeaf()
        #expect(deployedAfter[0] != deployedBefore[0], "the certificate file was not replaced")
        #expect(deployedAfter[1] == deployedBefore[1], "the key file changed")
        #expect(leafAfter != leafBefore, "the same certificate")
        #expect(try bed.deployedLeafHash() == bed.initialKeyHash)
        #expect(try await app.evaluate(chainFile: bed.certificateFile) == nil, "the app would refuse the new certificate")
        // nginx serves it once the reload is through.
        var served: [UInt8]?
        for _ in 0..<50 {
            served = try await bed.servedLeaf()
            if served == leafAfter { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(served == leafAfter, "nginx does not serve the new certificate")

        // Nothing about the rotation moved: the same pins, the same next key, still refused by the gate.
        #expect(try bed.pins() == pinned([bed.initialKeyHash: false, next: true]))
        #expect(try bed.stateNextKeyHash() == next)
        #expect(try bed.gateStatus(key: next) == 3)
        let leftOver = try bed.stateFiles().filter {
            ["pending.key", "pending.pub", "rollback.crt", "rollback.key", "next.csr", "live.csr"].contains($0) || $0.hasPrefix("live-key.")
        }
        #expect(leftOver.isEmpty, "\(leftOver)")

        // The app goes on connecting to the renewed host.
        try await app.waitForProbes(app.probes + 20)
        let report = await app.stop()
        stopped = true
        #expect(report.failures.isEmpty, "pinned connections refused: \(report.failures.prefix(5))")
        #expect(report.unreachable.isEmpty, "TLS server not answering: \(report.unreachable.prefix(5))")
        #expect(report.keysSeen == [bed.initialKeyHash])
    }
}

/// The pins a test expects, as `ACMERotationTestbed.pins()` lists them (hash: whether it is the next key); nil when a
/// key is named twice. Keys that ought to differ but do not (a renewal that kept its key) then fail the comparison,
/// where a dictionary literal with a repeated key would trap and end the whole test run.
private func pinned(_ pins: KeyValuePairs<String, Bool>) -> [String: Bool]? {
    var result: [String: Bool] = [:]
    for (hash, next) in pins {
        guard result.updateValue(next, forKey: hash) == nil else { return nil }
    }
    return result
}

enum ACMEClient: String, CustomStringConvertible {
    case certbot, lego
    var description: String { rawValue }
}

/// One pinned host with everything around it: pebble, a first certificate (key K0, pinned), nginx serving it
/// over TLS, `pinset serve` with the fast gate, and a `pinset acme` configuration for it.
final class ACMERotationTestbed: @unchecked Sendable {
    static let hostname = "api.pinset.test"
    /// deploy/acme/pinset-acme-certbot or pinset-acme-lego.
    static func shim(_ client: ACMEClient) -> String {
        SourceTree.path("deploy/acme/pinset-acme-\(client)")
    }

    let directory: TemporaryDirectory
    let pebble: PebbleACMEServer
    let cli: PinsetCLI
    let tlsServer: NginxLoadBalancer
    let server: RunningServer
    let certificateFile: String
    let keyFile: String
    let stateDirectory: String
    let configFile: String
    let initialKeyHash: String

    var stateNextKey: String { "\(stateDirectory)/next.key" }

    init() throws {
        directory = try TemporaryDirectory(prefix: "pinset-acme")
        var started: [() -> Void] = []
        do {
            pebble = try PebbleACMEServer(in: directory)
            started.append { [pebble] in pebble.stop() }

            // The first certificate, as if issued before Pinset's hooks were set up.
            let tls = directory.file("tls")
            try FileManager.default.createDirectory(atPath: tls, withIntermediateDirectories: true)
            keyFile = "\(tls)/api.key"
            certificateFile = "\(tls)/api.crt"
            let firstKey = directory.file("first.key")
            try Self.generateKey(at: firstKey)
            let first = try Self.legoRun(pebble: pebble, csr: try Self.csr(for: firstKey, in: directory), path: directory.file("first-lego"), hook: nil, environment: [:])
            guard first.status == 0 else { throw Failure("lego could not issue the first certificate: \(first.combined)") }
            try FileManager.default.copyItem(atPath: directory.file("first-lego/certificates/\(Self.hostname).crt"), toPath: certificateFile)
            try FileManager.default.copyItem(atPath: firstKey, toPath: keyFile)
            initialKeyHash = try Self.keyHash(firstKey)

            let certificateFile = certificateFile, keyFile = keyFile
            tlsServer = try NginxLoadBalancer(in: directory) { prefix, port in
                """
                \(NginxLoadBalancer.userDirective)
                worker_processes 1;
                pid \(prefix)/nginx.pid;
                error_log \(prefix)/error.log warn;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(prefix)/client_body;
                    proxy_temp_path \(prefix)/proxy;
                    fastcgi_temp_path \(prefix)/fastcgi;
                    uwsgi_temp_path \(prefix)/uwsgi;
                    scgi_temp_path \(prefix)/scgi;
                    server {
                        listen 127.0.0.1:\(port) ssl;
                        server_name \(Self.hostname);
                        ssl_certificate \(certificateFile);
                        ssl_certificate_key \(keyFile);
                        location / { return 200 "ok\\n"; }
                    }
                }
                """
            }
            started.append { [tlsServer] in tlsServer.stop() }

            cli = try PinsetCLI.initialized()
            started.append { [cli] in cli.remove() }
            for command in [
                ["customer", "add", "acme"],
                ["host", "add", "acme", Self.hostname, "--port", "\(tlsServer.port)"],
                ["pin", "add", "--skip-live-check", "--reason", "served on loopback under a test name", "acme", Self.hostname, "--hash", initialKeyHash],
            ] {
                let result = try cli.run(command)
                guard result.status == 0 else { throw Failure("pinset \(command.joined(separator: " ")): \(result.combined)") }
            }
            server = try RunningServer(cli: cli, extraConfiguration: [
                "resignIntervalSeconds": 1, "freshnessWindowSeconds": 60, "maxContentStalenessSeconds": 0, "uptakeWindowSeconds": 60,
                "uptakeSnapshotIntervalSeconds": 3,
            ])

            stateDirectory = directory.file("acme-state")
            configFile = try directory.write("pinset-acme.conf", """
                PINSET_DATA_DIR=\(cli.dataDir)
                PINSET_ACTOR=pinset-acme-test
                PINSET_CUSTOMER=acme
                PINSET_HOST=\(Self.hostname)
                PINSET_ACME_STATE_DIR=\(stateDirectory)
                PINSET_ACME_CERT_FILE=\(certificateFile)
                PINSET_ACME_KEY_FILE=\(keyFile)
                PINSET_ACME_RELOAD="kill -HUP \(tlsServer.process.pid)"
                PINSET_ACME_CONNECT=127.0.0.1:\(tlsServer.port)
                PINSET_ACME_CA_FILE=\(pebble.issuingRoot)
                PINSET_ACME_WAIT_SECONDS=30
                PINSET_ACME_SERVER=\(pebble.directoryURL)
                PINSET_ACME_EMAIL=ops@pinset.test

                """, mode: 0o600)
        } catch {
            for stop in started.reversed() { stop() }
            directory.remove()
            throw error
        }
    }

    func stop() {
        server.stop()
        tlsServer.stop()
        pebble.stop()
        cli.remove()
        directory.remove()
    }

    // MARK: Running things

    /// `pinset acme ARGUMENTS --config FILE`, off the cooperative pool.
    func acme(_ arguments: [String]) async throws -> ProcessRunner.Output {
        let configFile = configFile
        return try await blocking {
            try ProcessRunner.run(PinsetCLI.binary, ["acme"] + arguments + ["--config", configFile], timeout: 150)
        }
    }

    /// One forced renewal through the shim of `client` with `extra` in its environment, on a fresh loopback port
    /// for its challenge listener (pebble validates nothing, but the clients still open it).
    func renew(_ client: ACMEClient, environment extra: [String: String] = [:]) async throws -> ProcessRunner.Output {
        let port = try FreePort.pick()
        let clientArguments: [String]
        switch client {
        case .lego:
            clientArguments = ["--accept-tos", "--http", "--http.port", "127.0.0.1:\(port)"]
        case .certbot:
            let certbot = "\(stateDirectory)/certbot"
            clientArguments = ["--agree-tos", "--config-dir", "\(certbot)/config", "--work-dir", "\(certbot)/work",
                               "--logs-dir", "\(certbot)/logs", "--standalone", "--http-01-address", "127.0.0.1", "--http-01-port", "\(port)"]
        }
        let shim = Self.shim(client), arguments = ["--config", configFile, "--force", "--"] + clientArguments
        let environment = pebble.clientEnvironment.merging(extra.merging(["PINSET_BIN": PinsetCLI.binary]) { _, new in new }) { _, new in new }
        return try await blocking {
            try ProcessRunner.run(shim, arguments, environment: environment, timeout: 150)
        }
    }

    /// lego run by hand (not through the shim) with a CSR of `key` and `pinset acme deploy` as its hook; its
    /// output, and where lego saved the certificate.
    func legoDirect(csrFromKey key: String) async throws -> (ProcessRunner.Output, certificate: String) {
        let csr = try Self.csr(for: key, in: directory)
        let environment = ["PINSET_ACME_CONFIG": configFile]
        let path = directory.file("direct-lego-\(UUID().uuidString.prefix(6))")
        let pebble = pebble
        let output = try await blocking {
            try Self.legoRun(pebble: pebble, csr: csr, path: path, hook: "\(PinsetCLI.binary) acme deploy", environment: environment)
        }
        return (output, "\(path)/certificates/\(Self.hostname).crt")
    }

    static func legoRun(pebble: PebbleACMEServer, csr: String, path: String, hook: String?, environment: [String: String]) throws -> ProcessRunner.Output {
        var arguments = ["--server", pebble.directoryURL, "--accept-tos", "--email", "ops@pinset.test", "--path", path, "--csr", csr,
                         "--http", "--http.port", "127.0.0.1:\(try FreePort.pick())", "run"]
        if let hook { arguments += ["--run-hook", hook] }
        return try ProcessRunner.run("lego", arguments, environment: pebble.clientEnvironment.merging(environment) { _, new in new }, timeout: 150)
    }

    /// Polls `pinset rotation status` for `key` until it says safe (exit 0), at most three minutes.
    func waitForGate(key: String) async throws {
        let deadline = Date().addingTimeInterval(180)
        var last: Int32 = -1
        while Date() < deadline {
            last = try await blocking { [self] in try gateStatus(key: key) }
            if last == 0 { return }
            try await Task.sleep(for: .seconds(2))
        }
        let status = try cli.run(["rotation", "status", "acme", Self.hostname, "--data-dir", cli.dataDir])
        throw Failure("the gate for \(key) did not open within 180 s (last exit \(last)): \(status.combined)")
    }

    func gateStatus(key: String) throws -> Int32 {
        try cli.run(["rotation", "status", "acme", Self.hostname, "--key", key, "--data-dir", cli.dataDir]).status
    }

    // MARK: Looking at the result

    /// The host's pins: hash to whether it is marked next.
    func pins() throws -> [String: Bool] {
        let result = try cli.run(["pin", "list", "acme", Self.hostname, "--json"])
        guard result.status == 0 else { throw Failure("pinset pin list: \(result.combined)") }
        let document = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        let hosts = document?["hosts"] as? [[String: Any]] ?? []
        var pins: [String: Bool] = [:]
        for pin in hosts.first?["pins"] as? [[String: Any]] ?? [] {
            guard let hash = pin["pinSHA256"] as? String else { continue }
            pins[hash] = pin["next"] as? Bool ?? false
        }
        return pins
    }

    func stateNextKeyHash() throws -> String { try Self.keyHash(stateNextKey) }

    func stateFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: stateDirectory).sorted() }

    func mode(of path: String) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? NSNumber)?.intValue ?? -1
    }

    /// The certificate and key files nginx reads, byte for byte.
    func deployedFiles() throws -> [Data] {
        [try Data(contentsOf: URL(fileURLWithPath: certificateFile)), try Data(contentsOf: URL(fileURLWithPath: keyFile))]
    }

    /// The first certificate of the deployed chain, DER.
    func deployedLeaf() throws -> [UInt8] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: certificateFile)))
        guard let leaf = try PinMaterial.certificates(fromFileContents: bytes, origin: certificateFile).first else {
            throw Failure("\(certificateFile) holds no certificate")
        }
        return try PinMaterial.derBytes(of: leaf)
    }

    func deployedLeafHash() throws -> String {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: certificateFile)))
        let certificates = try PinMaterial.certificates(fromFileContents: bytes, origin: certificateFile)
        guard let hash = try certificates.first.flatMap({ try PinMaterial.pin(for: $0, source: PinSource(kind: .certificate)).spkiSHA256?.base64 }) else {
            throw Failure("\(certificateFile) holds no certificate")
        }
        return hash
    }

    /// The leaf nginx presents now, DER; nil when nothing answered.
    func servedLeaf() async throws -> [UInt8]? {
        let port = tlsServer.port
        return try await blocking { try Self.presentedChain(port: port) }.chain.first
    }

    /// The key of the leaf nginx presents now.
    func servedLeafHash() async throws -> String {
        let port = tlsServer.port
        let presented = try await blocking { try Self.presentedChain(port: port) }
        guard let hash = presented.leafHash else { throw Failure("nothing answered TLS on 127.0.0.1:\(port)") }
        return hash
    }

    /// The certificates `openssl s_client` was presented (DER, leaf first) and the leaf's key hash; empty when
    /// the handshake failed.
    static func presentedChain(port: Int) throws -> (chain: [[UInt8]], leafHash: String?) {
        let result = try ProcessRunner.run("openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", hostname, "-showcerts"],
                                           stdin: [], timeout: 10)
        guard let certificates = try? PinMaterial.certificates(fromFileContents: result.stdout, origin: "s_client output") else { return ([], nil) }
        let leafHash = try certificates.first.flatMap { try PinMaterial.pin(for: $0, source: PinSource(kind: .certificate)).spkiSHA256?.base64 }
        return (try certificates.map { try PinMaterial.derBytes(of: $0) }, leafHash)
    }

    // MARK: Keys

    func generateKey(at path: String) throws { try Self.generateKey(at: path) }

    /// A P-256 key, mode 0600 (as `pinset acme` makes them).
    static func generateKey(at path: String) throws {
        let result = try ProcessRunner.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        guard result.status == 0 else { throw Failure("openssl genpkey: \(result.stderr)") }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// A CSR for the test host from `key`.
    static func csr(for key: String, in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("\(UUID().uuidString.prefix(8)).csr")
        let result = try ProcessRunner.run("openssl", ["req", "-new", "-key", key, "-subj", "/CN=\(hostname)",
                                                       "-addext", "subjectAltName=DNS:\(hostname)", "-out", path])
        guard result.status == 0 else { throw Failure("openssl req: \(result.stderr)") }
        return path
    }

    /// The base64 SHA-256 of the key's SubjectPublicKeyInfo, by openssl.
    static func keyHash(_ key: String) throws -> String {
        let result = try ProcessRunner.run("sh", ["-c", "openssl pkey -in \"$1\" -pubout -outform DER | openssl dgst -sha256 -binary | base64", "sh", key])
        let hash = result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, hash.count == 44 else { throw Failure("no key hash for \(key): \(result.stderr)") }
        return hash
    }
}

/// Runs blocking work (a child process) on a Dispatch thread, so that the few threads of the cooperative pool
/// stay free for the app's tasks.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// The app: fetches its pins from `pinset serve` every second with the real `PinsetUpdater`, and connects to the
/// TLS host every 100 ms, judging each chain with the real `ServerTrustEvaluator` (chain to pebble's root, host
/// name, then the pins).
// Its loops run on threads of their own (`OwnThreadExecutor`: task executors need macOS 15), and so do the tests
// that start it.
@available(macOS 15.0, iOS 18.0, *)
final class PinnedApp: @unchecked Sendable {
    struct Report: Sendable {
        var probes = 0
        /// Connections the evaluator refused, with why and the key presented.
        var failures: [String] = []
        /// Connections where no chain came back at all.
        var unreachable: [String] = []
        /// Connections accepted, by the key of the leaf.
        var connections: [String: Int] = [:]
        /// Keys of the leaves accepted.
        var keysSeen: Set<String> { Set(connections.keys) }
        var updateErrors: [String] = []
    }

    private let report = LockedValue(Report())
    private let running = LockedValue(true)
    private var tasks: [Task<Void, Never>] = []
    private var evaluator: ServerTrustEvaluator?

    /// How the app would judge the chain in `chainFile` (PEM, leaf first) now: nil when it accepts it.
    func evaluate(chainFile: String) async throws -> ServerTrustError.Code? {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: chainFile)))
        let chain = try PinMaterial.certificates(fromFileContents: bytes, origin: chainFile).map { try PinMaterial.derBytes(of: $0) }
        let evaluator = try #require(evaluator)
        switch await evaluator.evaluate(serverHostname: ACMERotationTestbed.hostname, presentedChain: chain) {
        case .success: return nil
        case .failure(let error): return error.code
        }
    }

    static func start(_ bed: ACMERotationTestbed) async throws -> PinnedApp {
        let app = PinnedApp()
        let state = bed.directory.file("app-state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let trust = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(bed.cli.dataDir)/trust-cert.der")))
        let updater = PinsetUpdater(configuration: try PinsetClientConfiguration(
            serverURL: try #require(URL(string: bed.server.baseURL)), customer: try CustomerName("acme"),
            trustCertificates: [trust], stateDirectory: state
        ))
        _ = try await updater.update()
        let roots = try TLSTrustRoots(certificateFiles: [try [UInt8](Data(contentsOf: URL(fileURLWithPath: bed.pebble.issuingRoot)))])
        let evaluator = ServerTrustEvaluator(pins: updater.evaluator, trustRoots: roots)
        app.evaluator = evaluator
        let port = bed.tlsServer.port

        // Both loops run on threads of their own: on the shared pool, other tests' work would space their rounds out.
        app.tasks.append(Task.detached(executorPreference: OwnThreadExecutor(label: "pinset.test.app-updates")) {
            while app.running.withLock({ $0 }) {
                do { _ = try await updater.update() } catch { app.report.withLock { $0.updateErrors.append("\(error)") } }
                try? await Task.sleep(for: .seconds(1))
            }
        })
        app.tasks.append(Task.detached(executorPreference: OwnThreadExecutor(label: "pinset.test.app-connections")) {
            while app.running.withLock({ $0 }) {
                let presented = (try? await blocking { try ACMERotationTestbed.presentedChain(port: port) }) ?? (chain: [], leafHash: nil)
                let outcome = presented.chain.isEmpty ? nil : await evaluator.evaluate(serverHostname: ACMERotationTestbed.hostname, presentedChain: presented.chain)
                let leafKey = presented.leafHash ?? "?"
                app.report.withLock { report in
                    report.probes += 1
                    switch outcome {
                    case nil: report.unreachable.append(Date().formatted(.iso8601))
                    case .success?: report.connections[leafKey, default: 0] += 1
                    case .failure(let error)?: report.failures.append("\(Date().formatted(.iso8601)) key \(leafKey): \(error)")
                    }
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        })
        return app
    }

    /// How many times the app has connected so far.
    var probes: Int { report.withLock { $0.probes } }

    /// Waits until the app has connected `count` times since it started, at most `seconds` (generous: the app's
    /// rounds slow down on a busy machine).
    func waitForProbes(_ count: Int, within seconds: Double = 180) async throws {
        _ = try await eventually(within: seconds) { self.report.withLock { $0.probes } >= count }
    }

    /// Whether, within `seconds`, the app has accepted `count` connections whose leaf had `key`.
    func waitForConnections(with key: String, count: Int, within seconds: Double = 180) async throws -> Bool {
        try await eventually(within: seconds) { self.report.withLock { $0.connections[key, default: 0] } >= count }
    }

    /// Stops both loops and returns what they saw.
    func stop() async -> Report {
        running.withLock { $0 = false }
        for task in tasks { await task.value }
        return report.withLock { $0 }
    }

    /// For a test that ends early: the loops stop at their next turn.
    func stopNow() { running.withLock { $0 = false } }
}
