#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// Revoking a leaked online signer with the revocation floor, and the expiry figures of `/status`, through
/// the real binary, a real server, the client library over HTTP and the real `openssl`.
@Suite(.serialized) struct SignerRevocationFloorTests {
    let tool = OfflineRootTests()

    func file(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// A payload for `acme` signed by the leaked key with `openssl smime`, as an attacker holding it would.
    func forged(version: Int64, key: String, chain: String, floor: Int64? = nil, in directory: TemporaryDirectory) throws -> [UInt8] {
        let now = Int64(Date().timeIntervalSince1970)
        let floorMember = floor.map { #","signers-not-before":\#($0)"# } ?? ""
        let payload = #"{"customer":"acme","timestamp":\#(now),"hashes":[],"format":1,"version":\#(version),"expires":\#(now + 3600)\#(floorMember)}"#
        let input = try directory.write("forged-\(version).json", payload)
        let output = directory.file("forged-\(version).der")
        let signed = try tool.openssl(["smime", "-sign", "-binary", "-nodetach", "-md", "sha256", "-in", input, "-signer", chain, "-inkey", key, "-outform", "der", "-out", output])
        guard signed.status == 0 else { throw Failure("openssl smime -sign: \(signed.combined)") }
        return try file(output)
    }

    func client(_ server: RunningServer, root: String, state: TemporaryDirectory) throws -> PinsetClientConfiguration {
        try PinsetClientConfiguration(
            serverURL: try #require(URL(string: server.baseURL)),
            customer: try CustomerName("acme"),
            trustCertificates: [try file(root.replacingOccurrences(of: ".pem", with: ".der"))],
            stateDirectory: state.path
        )
    }

    @Test func aLeakedEarlierSignerIsRevokedWithoutAnAppUpdate() async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try tool.pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        let root = "\(rootDir)/root-cert.pem"
        try tool.issueAndInstall(cli, rootDir: rootDir)
        // The signer that leaks: its key and chain, as an attacker (or a forgotten instance) keeps them.
        let leakedKey = try cli.directory.write("leaked-key.pem", try file("\(cli.dataDir)/signing-key.pem"), mode: 0o600)
        let leakedChain = try cli.directory.write("leaked-chain.pem", try file(cli.trustCertificate))
        // Certificates carry whole seconds: the replacement must start at least a second later.
        usleep(1_100_000)
        try tool.issueAndInstall(cli, rootDir: rootDir)

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let state = try TemporaryDirectory(prefix: "pinset-floor-client")
        defer { state.remove() }
        let configuration = try client(server, root: root, state: state)
        let updater = PinsetUpdater(configuration: configuration)
        let first = try await updater.update()
        #expect(first.signersNotBefore == nil)

        // Before any floor the leaked signer is still a valid signer under the root: a control client takes it.
        let controlState = try TemporaryDirectory(prefix: "pinset-floor-control")
        defer { controlState.remove() }
        let control = PinsetUpdater(configuration: try client(server, root: root, state: controlState))
        let early = try forged(version: first.version + 1, key: leakedKey, chain: leakedChain, in: cli.directory)
        #expect(try await control.seed(withBundle: early).version == first.version + 1)

        // A floor later than the installed signer would make the server publish bundles its clients refuse.
        let untouched = try cli.databaseDump()
        let tooLate = try tool.pinset(cli, ["signer", "revoke-earlier", "--not-before", "4102444800"])
        #expect(tooLate.status != 0 && tooLate.stderr.contains("later than the notBefore"), "\(tooLate.combined)")
        #expect(try cli.databaseDump() == untouched)

        let revoked = try tool.pinset(cli, ["signer", "revoke-earlier", "--json"])
        #expect(revoked.status == 0, "\(revoked.combined)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(revoked.stdout)) as? [String: Any])
        let floor = try #require(report["signersNotBefore"] as? Int)
        #expect(report["installedSignerNotBefore"] as? Int == floor)
        #expect(report["customersWithNewVersion"] as? [String] == ["acme"])
        #expect(try cli.run(["log", "--customer", "acme"]).stdoutText.contains("identity.floor"))

        // The server publishes the floor; the client takes and keeps it.
        var current = first
        for _ in 0..<100 where current.signersNotBefore == nil {
            try await Task.sleep(for: .milliseconds(100))
            current = try await updater.update()
        }
        #expect(current.payload.signersNotBefore == Int64(floor))
        #expect(await updater.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(floor)))

        // Legacy clients ignore the new key: OpenSSL verifies the bundle as before; `pinset verify` shows it.
        let fetched = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
        let bundle = try cli.directory.write("with-floor.json.signed", fetched.body)
        #expect(String(decoding: try tool.openssl(["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", root]).stdout, as: UTF8.self).contains("\"signers-not-before\":\(floor)"))
        #expect(try tool.legacyVerifies(bundle, root: root))
        let verified = try cli.run(["verify", bundle, "--trust", root])
        #expect(verified.status == 0 && verified.stdoutText.contains("signers not before") && verified.stdoutText.contains("(\(floor))"), "\(verified.combined)")
        // A bundle whose own signer is older than the floor it carries does not verify.
        let selfRevoked = try cli.directory.write("self-revoked.json.signed", try forged(
            version: current.version + 1, key: "\(cli.dataDir)/signing-key.pem", chain: cli.trustCertificate, floor: Int64(floor) + 3600, in: cli.directory
        ))
        let refusedByVerify = try cli.run(["verify", selfRevoked, "--trust", root])
        #expect(refusedByVerify.status != 0 && refusedByVerify.stderr.contains("revokedSigner"), "\(refusedByVerify.combined)")
        // `pinset status` shows the floor of the default identity.
        let printed = try ProcessRunner.run(PinsetCLI.binary, ["status", "--url", server.baseURL], timeout: 30)
        #expect(printed.status == 0 && printed.stdoutText.contains("signers not before:"), "\(printed.combined)")

        // The leaked key now forges nothing, before and after a restart; the pins stay as they were.
        let late = try forged(version: current.version + 1, key: leakedKey, chain: leakedChain, in: cli.directory)
        let refused = try await #require(throws: PinUpdateError.self) { try await updater.seed(withBundle: late) }
        #expect(refused.code == .revokedSigner, "\(refused)")
        #expect(await updater.currentPinSet?.version == current.version)
        let restarted = PinsetUpdater(configuration: configuration)
        await restarted.loadStoredPins()
        #expect(await restarted.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(floor)))
        #expect(try await #require(throws: PinUpdateError.self) { try await restarted.seed(withBundle: late) }.code == .revokedSigner)

        // The floor cannot go down, and the refusal changes nothing.
        let before = try cli.databaseDump()
        let lower = try tool.pinset(cli, ["signer", "revoke-earlier", "--not-before", String(floor - 60)])
        #expect(lower.status != 0 && lower.stderr.contains("never goes down"), "\(lower.combined)")
        #expect(try cli.databaseDump() == before)

        // An instance still holding the older signer never signs with it: readiness and status say why, and
        // the last good bundle stays served.
        for (source, target, mode) in [(leakedChain, cli.trustCertificate, 0o644), (leakedKey, "\(cli.dataDir)/signing-key.pem", 0o600)] {
            let staged = try cli.directory.write("staged-\(UUID().uuidString.prefix(6))", try file(source), mode: mode)
            #expect(rename(staged, target) == 0)
        }
        #expect(try cli.run(["customer", "add", "beta"]).status == 0)
        try tool.expectStopsSigning(server, cli, saying: "revocation floor")
        #expect(try await updater.update().version == current.version, "the last good bundle is still served and accepted")
        #expect(server.stop() == 0)
    }

    /// A certificate the root issued before the floor (kept from an earlier request) would stop the identity
    /// signing: `signer install` refuses it and leaves the database and the installed signer as they were.
    /// A first floor on a deployment with no customer yet is set, and said to be: the first bundle of each customer
    /// carries it. Only the same floor again is "nothing was changed".
    @Test func aFirstFloorWithNoCustomerYetIsSetAndSaidToBe() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let rootDir = cli.directory.file("root")
        #expect(try tool.pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        usleep(1_100_000)
        try tool.issueAndInstall(cli, rootDir: rootDir)
        let first = try tool.pinset(cli, ["signer", "revoke-earlier"])
        #expect(first.status == 0 && first.combined.contains("is now") && first.combined.contains("No customer signs with it yet"), "\(first.combined)")
        let again = try tool.pinset(cli, ["signer", "revoke-earlier"])
        #expect(again.status == 0 && again.combined.contains("already is") && again.combined.contains("nothing was changed"), "\(again.combined)")
    }

    @Test func installRefusesASignerOlderThanTheFloor() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try tool.pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        // Issued, never installed: its pending key is set aside while a later signer is installed.
        #expect(try tool.pinset(cli, ["signer", "request"]).status == 0)
        let stale = cli.directory.file("stale.pem")
        #expect(try tool.pinset(cli, ["root", "issue", "\(cli.dataDir)/signer-request.csr", "--root-dir", rootDir, "--out", stale]).status == 0)
        let staleKey = try cli.directory.write("stale-key.pem", try file("\(cli.dataDir)/signing-key.pending.pem"), mode: 0o600)
        // Certificates carry whole seconds: the installed one must start at least a second later.
        usleep(1_100_000)
        try tool.issueAndInstall(cli, rootDir: rootDir)
        #expect(try tool.pinset(cli, ["signer", "revoke-earlier"]).status == 0)

        _ = try cli.directory.write("pending", try file(staleKey), mode: 0o600)
        #expect(rename(cli.directory.file("pending"), "\(cli.dataDir)/signing-key.pending.pem") == 0)
        let database = try cli.databaseDump()
        let installedKey = try file("\(cli.dataDir)/signing-key.pem")
        let installedChain = try file(cli.trustCertificate)
        let refused = try tool.pinset(cli, ["signer", "install", stale])
        #expect(refused.status != 0 && refused.stderr.contains("earlier than the revocation floor") && refused.stderr.contains("Nothing was changed"), "\(refused.combined)")
        #expect(try cli.databaseDump() == database)
        #expect(try file("\(cli.dataDir)/signing-key.pem") == installedKey)
        #expect(try file(cli.trustCertificate) == installedChain)
    }

    /// A floor that leaves the signer this instance replaced trusted (an explicit --not-before before it here;
    /// one issued within the same second as the installed signer escapes the same way) is set with a warning
    /// naming that certificate. The adopted root, which no floor revokes, is not warned about.
    @Test func revokeEarlierSaysWhenThePreviousSignerStaysTrusted() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try tool.pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        try tool.issueAndInstall(cli, rootDir: rootDir)
        let afterAdoption = try tool.pinset(cli, ["signer", "revoke-earlier", "--not-before", "0", "--json"])
        #expect(afterAdoption.status == 0 && !afterAdoption.stderr.contains("not revoked"), "\(afterAdoption.combined)")
        let adoptionReport = try #require(try JSONSerialization.jsonObject(with: Data(afterAdoption.stdout)) as? [String: Any])
        #expect(adoptionReport["signersNotBefore"] as? Int == 0 && adoptionReport["previousSignerRevoked"] == nil, "\(adoptionReport)")

        // Certificates carry whole seconds: the replacement must start at least a second later.
        usleep(1_100_000)
        try tool.issueAndInstall(cli, rootDir: rootDir)
        let early = try tool.pinset(cli, ["signer", "revoke-earlier", "--not-before", "1", "--json"])
        #expect(early.status == 0 && early.stderr.contains("trust-cert.pem.previous") && early.stderr.contains("not revoked"), "\(early.combined)")
        #expect((try JSONSerialization.jsonObject(with: Data(early.stdout)) as? [String: Any])?["previousSignerRevoked"] as? Bool == false)
        let full = try tool.pinset(cli, ["signer", "revoke-earlier", "--json"])
        #expect(full.status == 0 && !full.stderr.contains("not revoked"), "\(full.combined)")
        #expect((try JSONSerialization.jsonObject(with: Data(full.stdout)) as? [String: Any])?["previousSignerRevoked"] as? Bool == true)
    }

    @Test func statusGivesSignerAndRootExpiryPerIdentityAndMarksTheNearOnes() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        #expect(try cli.run(["customer", "add", "own", "--key-type", "p256"]).status == 0)
        let rootDir = cli.directory.file("root")
        #expect(try tool.pinset(cli, ["root", "adopt", "--root-dir", rootDir]).status == 0)
        // A 10-day signer: inside the 14-day warning window from the start.
        #expect(try tool.pinset(cli, ["signer", "request"]).status == 0)
        let short = cli.directory.file("short.pem")
        #expect(try tool.pinset(cli, ["root", "issue", "\(cli.dataDir)/signer-request.csr", "--root-dir", rootDir, "--days", "10", "--out", short]).status == 0)
        #expect(try tool.pinset(cli, ["signer", "install", short]).status == 0)

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let body = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory).body
        let report = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let identities = try #require(report["signingIdentities"] as? [[String: Any]], "\(String(decoding: body, as: UTF8.self))")
        #expect(identities.map { $0["identity"] as? String } == ["default", "customer own"])
        let byDefault = identities[0], own = identities[1]
        let signerLeft = try #require(byDefault["signerExpiresInSeconds"] as? Int)
        #expect((9 * 86_400...10 * 86_400).contains(signerLeft), "\(byDefault)")
        #expect(byDefault["signerExpiresSoon"] as? Bool == true)
        let rootLeft = try #require(byDefault["rootExpiresInSeconds"] as? Int)
        #expect((3649 * 86_400...3650 * 86_400).contains(rootLeft), "the 10-year certificate 'pinset init' made is the root: \(byDefault)")
        #expect(byDefault["rootExpiresSoon"] as? Bool == false)
        #expect(own["customer"] as? String == "own")
        #expect(own["signerExpiresSoon"] as? Bool == false && own["rootExpiresSoon"] as? Bool == false)
        #expect(own["signerNotAfter"] as? String == own["rootNotAfter"] as? String, "a self-signed identity is its own root")

        let printed = try ProcessRunner.run(PinsetCLI.binary, ["status", "--url", server.baseURL], timeout: 30)
        #expect(printed.status == 0, "\(printed.combined)")
        let lines = printed.stdoutText.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("signing identity:") && $0.hasSuffix("default") })
        #expect(lines.contains { $0.hasPrefix("signing identity:") && $0.hasSuffix("customer own") })
        #expect(lines.filter { $0.contains("RENEW SOON") }.count == 1, "only the default identity's 10-day signer: \(printed.stdoutText)")
        #expect(lines.contains { $0.contains("signer expires:") && $0.contains("RENEW SOON") && ($0.contains("in 9 days") || $0.contains("in 10 days")) }, "\(printed.stdoutText)")
        #expect(server.stop() == 0)
    }
}
