import Foundation
import PinsetCore
import PinsetStore
import PinsetTestSupport
import Testing

/// `pinset rotation` through the real binary: next keys from a CSR, a public key and a certificate, the gate's
/// verdicts and exit statuses against crafted uptake figures, and the figures a real `pinset serve` shares.
@Suite(.serialized) struct CLIRotationTests {
    static let customer = "acme"
    static let host = "api.example.com"

    func rotation(_ cli: PinsetCLI, _ arguments: [String]) throws -> ProcessRunner.Output {
        try cli.run(["rotation"] + arguments + ["--data-dir", cli.dataDir, "--actor", "rotation-test"])
    }

    /// A deployment with one host pinned to two spare keys (the live-chain check skipped: no server runs here).
    func deployment() throws -> PinsetCLI {
        let cli = try PinsetCLI.initialized()
        for arguments in [
            ["customer", "add", Self.customer],
            ["host", "add", Self.customer, Self.host],
            ["pin", "add", Self.customer, Self.host, "--hash", Data(repeating: 1, count: 32).base64EncodedString(),
             "--hash", Data(repeating: 2, count: 32).base64EncodedString(), "--skip-live-check", "--reason", "test host"],
        ] {
            let result = try cli.run(arguments)
            guard result.status == 0 else { throw Failure("\(arguments): \(result.combined)") }
        }
        return cli
    }

    func key(_ cli: PinsetCLI, _ name: String) throws -> (key: String, publicKey: String, csr: String, hash: String) {
        let key = cli.directory.file("\(name).key"), publicKey = cli.directory.file("\(name).pub"), csr = cli.directory.file("\(name).csr")
        for arguments in [
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
            ["pkey", "-in", key, "-pubout", "-out", publicKey],
            ["req", "-new", "-key", key, "-subj", "/CN=\(Self.host)", "-out", csr],
        ] {
            let result = try ProcessRunner.run("openssl", arguments)
            guard result.status == 0 else { throw Failure("openssl \(arguments): \(result.stderr)") }
        }
        let der = try ProcessRunner.run("openssl", ["pkey", "-pubin", "-in", publicKey, "-outform", "der"])
        return (key, publicKey, csr, SHA256Fingerprint(of: der.stdout).base64)
    }

    func json(_ output: ProcessRunner.Output) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(output.stdout))
    }

    @Test func nextKeysComeFromACSRAPublicKeyOrACertificateAndAreListed() throws {
        let cli = try deployment()
        defer { cli.remove() }
        let first = try key(cli, "first"), second = try key(cli, "second"), third = try key(cli, "third")
        let certificate = cli.directory.file("third.pem")
        #expect(try ProcessRunner.run("openssl", ["req", "-x509", "-key", third.key, "-subj", "/CN=\(Self.host)", "-days", "30", "-out", certificate]).status == 0)

        let fromCSR = try rotation(cli, ["add-next", Self.customer, Self.host, "--csr", first.csr, "--reason", "acme: key for the next renewal", "--json"])
        #expect(fromCSR.status == 0, "\(fromCSR.combined)")
        #expect((try json(fromCSR) as? [String: Any])?["pin"] as? String == first.hash)
        #expect(try rotation(cli, ["add-next", Self.customer, Self.host, "--public-key", second.publicKey, "--reason", "spare next"]).status == 0)
        #expect(try rotation(cli, ["add-next", Self.customer, Self.host, "--certificate", certificate, "--reason", "pre-issued"]).status == 0)

        let list = try cli.run(["pin", "list", Self.customer, Self.host, "--json"])
        let pins = (((try json(list) as? [String: Any])?["hosts"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]]) ?? []
        let next = Set(pins.filter { $0["next"] as? Bool == true }.compactMap { $0["pinSHA256"] as? String })
        #expect(next == [first.hash, second.hash, third.hash])
        #expect(pins.filter { $0["next"] as? Bool == true }.allSatisfy { $0["publishedAt"] is String && $0["publishedVersion"] is Int })
        let table = try cli.run(["pin", "list", Self.customer, Self.host])
        #expect(table.stdoutText.contains("NEXT SINCE"))
        let audit = try cli.run(["log", "--customer", Self.customer])
        #expect(audit.stdoutText.contains("acme: key for the next renewal"), "\(audit.combined)")
    }

    @Test func aRequestWhoseSignatureDoesNotVerifyIsRefusedAndChangesNothing() throws {
        let cli = try deployment()
        defer { cli.remove() }
        let genuine = try key(cli, "genuine")
        // Flip a byte of the signature (the end of the DER request): the request no longer proves the key.
        let der = try ProcessRunner.run("openssl", ["req", "-in", genuine.csr, "-outform", "der"]).stdout
        var forged = der
        forged[forged.count - 3] ^= 0x55
        let path = cli.directory.file("forged.der")
        try Data(forged).write(to: URL(fileURLWithPath: path))
        let before = try cli.databaseDump()
        let refused = try rotation(cli, ["add-next", Self.customer, Self.host, "--csr", path, "--reason", "forged"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("signature does not verify"), "\(refused.combined)")
        #expect(try cli.databaseDump() == before)
    }

    func share(_ cli: PinsetCLI, holding: Int, of reporting: Int, since version: Int64, times: ServingTimes, at now: Date = Date()) throws {
        let store = try PinStore.open(path: cli.database)
        defer { try? store.close() }
        try store.replaceUptakeSnapshot(UptakeSnapshot(
            instance: "crafted", windowSeconds: 3600, servingTimes: times, takenAt: now, validUntil: now.addingTimeInterval(600),
            fetches: [try CustomerName(Self.customer): [version - 1: reporting - holding, version: holding, UptakeSnapshot.unknownVersion: 7]]
        ))
    }

    @Test func theGateSaysNotYetBelowTheShareAndSafeAboveWithItsExitStatuses() throws {
        let cli = try deployment()
        defer { cli.remove() }
        #expect(try rotation(cli, ["status", Self.customer, Self.host]).status == 4, "no next key yet")
        let next = try key(cli, "next")
        let added = try rotation(cli, ["add-next", Self.customer, Self.host, "--public-key", next.publicKey, "--reason", "next", "--json"])
        let version = try #require((try json(added) as? [String: Any])?["version"] as? Int)

        let noServers = try rotation(cli, ["status", Self.customer, Self.host])
        #expect(noServers.status == 3)
        #expect(noServers.stdoutText.contains("no running 'pinset serve' shares uptake figures"), "\(noServers.combined)")

        // Serving times of zero: only the share decides.
        let instant = ServingTimes(resignIntervalSeconds: 0, freshnessWindowSeconds: 0, maxAgeSeconds: 0)
        try share(cli, holding: 80, of: 100, since: Int64(version), times: instant)
        let below = try rotation(cli, ["status", Self.customer, Self.host, "--minimum-share", "0.9", "--json"])
        #expect(below.status == 3, "\(below.combined)")
        let entry = try #require((try json(below) as? [[String: Any]])?.first)
        #expect(entry["verdict"] as? String == "not-yet")
        let candidate = try #require((entry["nextKeys"] as? [[String: Any]])?.first)
        #expect(candidate["fetchesHoldingKey"] as? Int == 80)
        #expect(candidate["fetchesReportingVersion"] as? Int == 100)
        #expect(candidate["fetchesWithoutVersion"] as? Int == 7)

        try share(cli, holding: 95, of: 100, since: Int64(version), times: instant)
        let above = try rotation(cli, ["status", Self.customer, Self.host, "--minimum-share", "0.9"])
        #expect(above.status == 0, "\(above.combined)")
        #expect(try rotation(cli, ["status", Self.customer, Self.host, "--key", next.hash, "--minimum-share", "0.9"]).status == 0)
        let stranger = try key(cli, "stranger")
        let unknownKey = try rotation(cli, ["status", Self.customer, Self.host, "--key", stranger.hash])
        #expect(unknownKey.status == 4)
        #expect(unknownKey.stdoutText.contains("not pinned"), "\(unknownKey.combined)")

        // Real settings: the key was published just now, so the freshness window still holds older bundles.
        try share(cli, holding: 100, of: 100, since: Int64(version), times: ServingTimes(resignIntervalSeconds: 300, freshnessWindowSeconds: 600, maxAgeSeconds: 300))
        let early = try rotation(cli, ["status", Self.customer, Self.host, "--minimum-share", "0.9"])
        #expect(early.status == 3)
        #expect(early.stdoutText.contains("published too recently"), "\(early.combined)")
        #expect(early.stdoutText.contains("= 1200 s"), "\(early.combined)")
        #expect(try rotation(cli, ["status", Self.customer, Self.host, "--minimum-share", "1.5"]).status == 64)
    }

    @Test func aRunningServerSharesItsSettingsAndFetchesAndWithdrawsThemWhenItStops() throws {
        let cli = try deployment()
        defer { cli.remove() }
        let next = try key(cli, "next")
        #expect(try rotation(cli, ["add-next", Self.customer, Self.host, "--public-key", next.publicKey, "--reason", "next"]).status == 0)
        let server = try RunningServer(cli: cli, extraConfiguration: [
            "resignIntervalSeconds": 2, "freshnessWindowSeconds": 120, "maxContentStalenessSeconds": 30, "uptakeWindowSeconds": 120,
            "uptakeSnapshotIntervalSeconds": 3,
        ])
        defer { server.stop() }
        let bundle = try CurlResponse.get("\(server.baseURL)/\(Self.customer).json.signed", in: cli.directory)
        #expect(bundle.status == 200)
        let list = try cli.run(["pin", "list", Self.customer, "--json"])
        let version = try #require((try json(list) as? [String: Any])?["version"] as? Int)
        for _ in 0..<3 { _ = try CurlResponse.get("\(server.baseURL)/\(Self.customer).json.signed", ["-H", "Pinset-Version: \(version)"], in: cli.directory) }

        var entry: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(60)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            let status = try rotation(cli, ["status", Self.customer, Self.host, "--json"])
            entry = (try json(status) as? [[String: Any]])?.first ?? [:]
        } while ((entry["nextKeys"] as? [[String: Any]])?.first?["fetchesHoldingKey"] as? Int ?? 0) < 3 && Date() < deadline
        #expect(entry["runningServers"] as? Int == 1)
        #expect((entry["timeRule"] as? [String: Any])?["totalSeconds"] as? Int == 2 + 30 + 120 + 0)
        #expect((entry["nextKeys"] as? [[String: Any]])?.first?["fetchesHoldingKey"] as? Int == 3)
        #expect((entry["nextKeys"] as? [[String: Any]])?.first?["fetchesWithoutVersion"] as? Int == 1)

        #expect(server.stop() == 0)
        let after = try rotation(cli, ["status", Self.customer, Self.host, "--json"])
        #expect((try json(after) as? [[String: Any]])?.first?["runningServers"] as? Int == 0)
    }
}
