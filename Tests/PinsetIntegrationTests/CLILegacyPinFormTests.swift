import Foundation
import PinsetTestSupport
import Testing

/// Pins entered in the forms signer.py stores them (`fp` hex, `pk` base64), and the bundle they produce,
/// read back with `openssl smime -verify`.
@Suite(.serialized) struct CLILegacyPinFormTests {
    @Test func fingerprintsAndInlineKeysAsSignerPyStoresThem() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let root = cli.directory.file("hosts-root")
        try FileManager.default.createDirectory(atPath: "\(root)/hosts", withIntermediateDirectories: true)
        let leaf = try SignerPyFixture.hostCertificate(root: root, name: "leaf")
        let backup = try SignerPyFixture.hostCertificate(root: root, name: "backup")

        // A bare fingerprint, and a key pasted from a .json 'pk'.
        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate-sha256", backup.fp, "--public-key", leaf.pk])
        #expect(added.status == 0, "\(added.combined)")
        // The leaf's certificate after its key: the pin gains the certificate's fp instead of failing.
        let upgraded = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", "\(root)/hosts/leaf.pem"])
        #expect(upgraded.status == 0, "\(upgraded.combined)")
        #expect(upgraded.stdoutText.contains("updated"))
        let repeated = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", "\(root)/hosts/leaf.pem"])
        #expect(repeated.status != 0 && repeated.stderr.contains("already has the pin"))

        let bad = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate-sha256", "abcd"])
        #expect(bad.status != 0 && bad.stderr.contains("64 hex digits"))
        let notAKey = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--public-key", "bm90IGEga2V5"])
        #expect(notAKey.status != 0 && notAKey.stderr.contains("SubjectPublicKeyInfo"))

        let out = cli.directory.file("out")
        #expect(try cli.run(["sign", "--out", out]).status == 0)
        let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", "\(out)/acme.json.signed", "-CAfile", cli.trustCertificate])
        #expect(verified.status == 0, "\(verified.stderr)")
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])
        let host = try #require((payload["hashes"] as? [[String: Any]])?.first)
        #expect(Set(host["fp"] as? [String] ?? []) == [leaf.fp, backup.fp])
        #expect(host["pk"] as? [String] == [leaf.pk])
        #expect((host["pin-sha256"] as? [String])?.count == 1)

        let removed = try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate-sha256", backup.fp])
        #expect(removed.status == 0, "\(removed.combined)")
    }
}
