#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetCore
import PinsetTestSupport
import Testing

/// What an app sees when an online signer key leaks, end to end with `pinset client` (the real
/// `PinsetUpdater`), a real `pinset serve`, bundles forged with the leaked key by `openssl cms -sign` and served
/// by a separate loopback HTTP server, the attacker's.
@Suite(.serialized) struct LeakedSignerRecoveryTests {
    let tool = OfflineRootTests()

    struct Attacker {
        let directory: TemporaryDirectory
        let key: String
        let chain: String
        let port: Int
        let server: BackgroundProcess
        var url: String { "http://127.0.0.1:\(port)/" }

        /// Signs a payload for `acme` with the leaked key and serves it at `/acme.json.signed`.
        func serve(version: Int64, lifetime: Int64, pin: String, tool: OfflineRootTests) throws {
            let now = Int64(Date().timeIntervalSince1970)
            let payload = #"{"customer":"acme","timestamp":\#(now),"hashes":[{"hostname":"api.example.com","port":"443","fp":[],"pk":[],"pin-sha256":["\#(pin)"],"include-subdomains":false}],"format":1,"version":\#(version),"expires":\#(now + lifetime)}"#
            let input = try directory.write("payload.json", payload)
            let signed = try tool.openssl([
                "cms", "-sign", "-binary", "-nodetach", "-md", "sha256", "-in", input, "-signer", chain, "-inkey", key,
                "-outform", "der", "-out", directory.file("www/acme.json.signed"),
            ])
            guard signed.status == 0 else { throw Failure("openssl cms -sign: \(signed.combined)") }
        }

        /// The attacker of `cli`'s deployment: its default signing key and certificate copied out, and a loopback web
        /// server of its own serving `www` in a new directory. The caller stops `server` and removes `directory`.
        static func start(leakingFrom cli: PinsetCLI) throws -> Attacker {
            let www = try TemporaryDirectory(prefix: "pinset-attacker")
            try FileManager.default.createDirectory(atPath: www.file("www"), withIntermediateDirectories: true)
            let port = try FreePort.pick()
            let server = try BackgroundProcess("python3", ["-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", www.file("www")], logDirectory: www.path, name: "attacker")
            guard FreePort.waitUntilListening(port: port) else {
                server.stop()
                throw Failure("the attacker's web server did not listen on \(port)")
            }
            return Attacker(
                directory: www,
                key: try www.write("leaked-key.pem", [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/signing-key.pem"))), mode: 0o600),
                chain: try www.write("leaked-chain.pem", [UInt8](try Data(contentsOf: URL(fileURLWithPath: cli.trustCertificate)))),
                port: port, server: server
            )
        }

        var bundle: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("www/acme.json.signed"))))) ?? [] }
    }

    func client(_ cli: PinsetCLI, _ arguments: [String]) throws -> ProcessRunner.Output {
        try cli.run(["client"] + arguments)
    }

    func json(_ output: ProcessRunner.Output) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.combined)")
    }

    @Test func aFastForwardWithALeakedKeyIsRecoveredByTheFloorWithoutAnAppUpdate() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let genuinePin = Base64.encode([UInt8](repeating: 7, count: 32))
        let forgedPin = Base64.encode([UInt8](repeating: 9, count: 32))
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "acme", "api.example.com", "--hash", genuinePin, "--skip-live-check", "--reason", "not served in this test"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try tool.pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        let rootDER = "\(rootDir)/root-cert.der"
        try tool.issueAndInstall(cli, rootDir: rootDir)

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let state = cli.directory.file("app-state")
        let first = try client(cli, ["update", "--server", server.baseURL, "--customer", "acme", "--trust", rootDER, "--state-dir", state, "--json"])
        #expect(first.status == 0, "\(first.combined)")
        let genuineVersion = try #require(try json(first)["version"] as? Int64)

        // The leak: the signer key file and its certificate, copied out.
        let attacker = try Attacker.start(leakingFrom: cli)
        defer {
            attacker.server.stop()
            attacker.directory.remove()
        }

        // Version 2^62, expiring in a century: refused by the bounds whatever the signer.
        try attacker.serve(version: 1 << 62, lifetime: 100 * 365 * 86_400, pin: forgedPin, tool: tool)
        let century = try client(cli, ["update", "--server", attacker.url, "--state-dir", state])
        #expect(century.status == 17 && century.stderr.contains("lifetimeTooLong"), "\(century.combined)")
        try attacker.serve(version: 1 << 62, lifetime: 3600, pin: forgedPin, tool: tool)
        let farAhead = try client(cli, ["update", "--server", attacker.url, "--state-dir", state])
        #expect(farAhead.status == 18 && farAhead.stderr.contains("versionAheadOfSigningTime"), "\(farAhead.combined)")

        // As far ahead as the bounds allow: the signer is still valid, so the app takes it.
        let now = Int64(Date().timeIntervalSince1970)
        let forgedVersion = BundleBounds.highestVersion(signedAt: now)
        try attacker.serve(version: forgedVersion, lifetime: 3600, pin: forgedPin, tool: tool)
        let forgedBundle = attacker.bundle
        let taken = try client(cli, ["update", "--server", attacker.url, "--state-dir", state, "--json"])
        #expect(taken.status == 0, "\(taken.combined)")
        #expect(try json(taken)["version"] as? Int64 == forgedVersion)

        // The operator follows docs/offline-root.md: a new signer, then revoke the earlier ones.
        usleep(1_100_000)
        try tool.issueAndInstall(cli, rootDir: rootDir)
        let revoked = try tool.pinset(cli, ["signer", "revoke-earlier"])
        #expect(revoked.status == 0, "\(revoked.combined)")

        // The next update from the real server brings the genuine pins back, though its version is far lower.
        var recovered: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(20)
        repeat {
            let update = try client(cli, ["update", "--server", server.baseURL, "--state-dir", state, "--json"])
            if update.status == 0, let object = try? json(update), object["signersNotBefore"] is String { recovered = object }
            if recovered.isEmpty { usleep(200_000) }
        } while recovered.isEmpty && Date() < deadline
        let recoveredVersion = try #require(recovered["version"] as? Int64, "the app never recovered")
        #expect(recoveredVersion > genuineVersion && recoveredVersion < forgedVersion)
        let hosts = try #require(recovered["hosts"] as? [[String: Any]])
        #expect(hosts.first?["pinSHA256"] as? [String] == [genuinePin])

        // The forged bundle served again is refused; the pins held stay the genuine ones.
        _ = try attacker.directory.write("www/acme.json.signed", forgedBundle)
        let replay = try client(cli, ["update", "--server", attacker.url, "--state-dir", state])
        #expect(replay.status == 16 && replay.stderr.contains("revokedSigner"), "\(replay.combined)")
        let shown = try client(cli, ["show", "--state-dir", state, "--json"])
        #expect(shown.status == 0, "\(shown.combined)")
        #expect(try json(shown)["version"] as? Int64 == recoveredVersion)
        #expect(try json(shown)["signersNotBefore"] is String)
    }

    @Test func clientCheckTrustsAMatchingChainAndShowsTheChainOfOneThatDoesNotMatch() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let pinned = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "pinned")
        let unpinned = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "unpinned")
        let roots = try cli.directory.write("roots.pem", try String(contentsOfFile: pinned.cert, encoding: .utf8) + String(contentsOfFile: unpinned.cert, encoding: .utf8))
        let port = try FreePort.pick()
        let pinnedHash = try CLIPinSourceTests.opensslPin(certificate: pinned.cert)
        let unpinnedHash = try CLIPinSourceTests.opensslPin(certificate: unpinned.cert)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "localhost", "--port", "\(port)"]).status == 0)
        #expect(try cli.run(["pin", "add", "acme", "localhost", "--hash", pinnedHash, "--skip-live-check", "--reason", "server not started yet"]).status == 0)
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let state = cli.directory.file("app-state")
        let noPins = try client(cli, ["check", "localhost:\(port)", "--state-dir", state, "--customer", "acme", "--trust", cli.trustCertificate])
        #expect(noPins.status == 33, "\(noPins.combined)")
        let updated = try client(cli, ["update", "--server", server.baseURL, "--customer", "acme", "--trust", cli.trustCertificate, "--state-dir", state])
        #expect(updated.status == 0 && updated.stdoutText.contains("ACCEPTED"), "\(updated.combined)")

        func serve(_ certificate: (key: String, cert: String)) throws -> BackgroundProcess {
            try CLIPinSourceTests.serveTLS(certificate, port: port, logDirectory: cli.directory.path)
        }

        let good = try serve(pinned)
        let trusted = try client(cli, ["check", "localhost:\(port)", "--state-dir", state, "--ca-file", roots])
        let trustedViaConnectTo = try client(cli, ["check", "localhost:\(port)", "--state-dir", state, "--ca-file", roots, "--connect-to", "127.0.0.1:\(port)", "--json"])
        good.stop()
        #expect(trusted.status == 0 && trusted.stdoutText.contains("TRUSTED") && trusted.stdoutText.contains(pinnedHash), "\(trusted.combined)")
        #expect(trustedViaConnectTo.status == 0, "\(trustedViaConnectTo.combined)")
        #expect(try json(trustedViaConnectTo)["trusted"] as? Bool == true)

        let swapped = try serve(unpinned)
        defer { swapped.stop() }
        let refused = try client(cli, ["check", "localhost:\(port)", "--state-dir", state, "--ca-file", roots])
        #expect(refused.status == 31, "\(refused.combined)")
        #expect(refused.stderr.contains("Peer certificate chain") && refused.stderr.contains("sha256/\(unpinnedHash)") && refused.stderr.contains("CN=unpinned"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Pinned for 'localhost'") && refused.stderr.contains("sha256/\(pinnedHash)"), "\(refused.stderr)")
        // Without the CA the chain itself is not valid: refused before the pins, with the chain shown too.
        let untrusted = try client(cli, ["check", "localhost:\(port)", "--state-dir", state])
        #expect(untrusted.status == 30 && untrusted.stderr.contains("sha256/\(unpinnedHash)"), "\(untrusted.combined)")
    }
}
