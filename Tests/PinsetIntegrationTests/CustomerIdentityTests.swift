#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Customers with their own signing identity beside customers on the deployment's key, through the real
/// binary, `pinset serve`, curl and `openssl smime -verify`.
@Suite(.serialized) struct CustomerIdentityTests {
    func verifies(_ bundle: String, under certificate: String) throws -> Bool {
        try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", certificate]).status == 0
    }

    func status(_ server: RunningServer, _ cli: PinsetCLI) throws -> [String: Any] {
        let response = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func ownRSAKeyBesideTheDefaultKey() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let added = try cli.run(["customer", "add", "own", "--key-type", "rsa2048"])
        #expect(added.status == 0, "\(added.combined)")
        let anchor = try #require(Data(base64Encoded: added.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        let ownCertificate = "\(cli.dataDir)/customers/own/trust-cert.pem"
        let ownDER = try Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/customers/own/trust-cert.der"))
        #expect(anchor == ownDER, "the printed certificate is the one written for the customer")

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let own = try CurlResponse.get("\(server.baseURL)/own.json.signed", in: cli.directory)
        let plain = try CurlResponse.get("\(server.baseURL)/plain.json.signed", in: cli.directory)
        #expect(own.status == 200 && plain.status == 200)
        let ownBundle = try cli.directory.write("own.json.signed", own.body)
        let plainBundle = try cli.directory.write("plain.json.signed", plain.body)
        #expect(try verifies(ownBundle, under: ownCertificate))
        #expect(try !verifies(ownBundle, under: cli.trustCertificate))
        #expect(try verifies(plainBundle, under: cli.trustCertificate))
        #expect(try !verifies(plainBundle, under: ownCertificate))
        #expect(server.stop() == 0)
    }

    @Test func aWorldReadableKeyStopsOnlyItsCustomer() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "own", "--key-type", "rsa2048"]).status == 0)
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        let key = "\(cli.dataDir)/customers/own/signing-key.pem"
        chmod(key, 0o644)

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/own.json.signed", in: cli.directory).status == 503)
        #expect(try CurlResponse.get("\(server.baseURL)/plain.json.signed", in: cli.directory).status == 200)
        let report = try status(server, cli)
        let failures = try #require(report["customersNotSigned"] as? [[String: Any]])
        #expect(failures.count == 1)
        #expect(failures.first?["customer"] as? String == "own")
        #expect((failures.first?["reason"] as? String)?.contains("readable by group or others") == true)
        #expect(report["ready"] as? Bool == true, "the default identity is fine, so the server stays ready")
        let metrics = String(decoding: try CurlResponse.get("\(server.baseURL)/metrics", in: cli.directory).body, as: UTF8.self)
        #expect(metrics.contains("pinset_customers_not_signed 1"), "\(metrics)")
        let signOut = try cli.run(["sign", "--out", cli.directory.file("out")])
        #expect(signOut.status != 0 && signOut.stderr.contains("own"))
        #expect(FileManager.default.fileExists(atPath: cli.directory.file("out/plain.json.signed")))
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("out/own.json.signed")))

        // Fixed, and any change triggers a pass: the customer is signed again, with its own key.
        chmod(key, 0o600)
        #expect(try cli.run(["host", "add", "own", "api.example.com"]).status == 0)
        var recovered = false
        for _ in 0..<100 where !recovered {
            recovered = try CurlResponse.get("\(server.baseURL)/own.json.signed", in: cli.directory).status == 200
            if !recovered { usleep(100_000) }
        }
        #expect(recovered)
        #expect(try status(server, cli)["customersNotSigned"] == nil)
        #expect(server.stop() == 0)
    }

    /// The default key becoming unusable takes readiness down with the reason, while a customer with its own
    /// key keeps being signed.
    @Test func anUnusableDefaultKeyFailsReadinessButNotOwnKeys() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "own", "--key-type", "p256"]).status == 0)
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)

        chmod("\(cli.dataDir)/signing-key.pem", 0o644)
        #expect(try cli.run(["host", "add", "own", "api.example.com"]).status == 0)
        // A host is published once it has a pin.
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "own", "api.example.com", "--hash", Data(repeating: 7, count: 32).base64EncodedString()]).status == 0)
        var readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        for _ in 0..<100 where readiness.status == 200 {
            usleep(100_000)
            readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        }
        #expect(readiness.status == 503)
        #expect(String(decoding: readiness.body, as: UTF8.self).contains("default signing identity"))
        // The pass after the pin edit may still be under way: wait (bounded) for the bundle that carries it.
        var hosts: [Any]? = nil
        for _ in 0..<50 where hosts?.count != 1 {
            let own = try CurlResponse.get("\(server.baseURL)/own.json.signed", in: cli.directory)
            #expect(own.status == 200)
            let bundle = try cli.directory.write("own.json.signed", own.body)
            let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", "\(cli.dataDir)/customers/own/trust-cert.pem"])
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])
            hosts = payload["hashes"] as? [Any]
            if hosts?.count != 1 { usleep(100_000) }
        }
        #expect(hosts?.count == 1, "the bundle signed after the change, with the customer's own key")
        chmod("\(cli.dataDir)/signing-key.pem", 0o600)
        #expect(server.stop() == 0)
    }

    @Test func certificatesExpiringBeforeTheBundleAreRefusedAndSoonWarned() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        // Shorter than a bundle lifetime and a re-sign interval with the defaults: refused outright.
        let refused = try cli.run(["customer", "add", "short", "--key-type", "p256", "--validity-days", "1"])
        #expect(refused.status != 0 && refused.stderr.contains("at least 2 days"), "\(refused.combined)")
        #expect(try cli.run(["customer", "add", "short", "--key-type", "p256", "--validity-days", "2"]).status == 0)
        #expect(try cli.run(["customer", "add", "soon", "--key-type", "p256", "--validity-days", "10"]).status == 0)
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        // Bundles valid for three days would outlive the two-day certificate.
        let server = try RunningServer(cli: cli, extraConfiguration: ["bundleLifetimeSeconds": 3 * 86_400])
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/short.json.signed", in: cli.directory).status == 503)
        #expect(try CurlResponse.get("\(server.baseURL)/plain.json.signed", in: cli.directory).status == 200)
        let report = try status(server, cli)
        let failures = try #require(report["customersNotSigned"] as? [[String: Any]])
        #expect(failures.first?["customer"] as? String == "short")
        #expect((failures.first?["reason"] as? String)?.contains("before the bundles' expiry") == true)
        #expect(failures.count == 1)
        // With that server running, the CLI holds new identities to its bundle lifetime, as it shares it through the
        // database: two days no longer suffice.
        // (The server wrote its figures when it started, before the requests above.)
        let later = try cli.run(["customer", "add", "later", "--key-type", "p256", "--validity-days", "2"])
        #expect(later.status != 0 && later.stderr.contains("a bundle lifetime of 259200 s") && later.stderr.contains("at least 4 days"), "\(later.combined)")
        #expect(try cli.run(["customer", "add", "later", "--key-type", "p256", "--validity-days", "4"]).status == 0)
        // Ten days left: still signed, with a warning ahead of expiry.
        #expect(try CurlResponse.get("\(server.baseURL)/soon.json.signed", in: cli.directory).status == 200)
        let warnings = try #require(report["warnings"] as? [String])
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("customer 'soon'") == true)
        #expect(server.stop() == 0)
    }

    @Test func identityShowAndRotate() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let shown = try cli.run(["customer", "identity", "show", "acme", "--json"])
        #expect(shown.status == 0, "\(shown.combined)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [String: Any])
        #expect(report["signer"] as? String == "default")

        // A new anchor strands the apps unless the operator confirms they embed it.
        let refused = try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--replace-trust-anchor"))
        #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/customers/acme/signing-key.pem"))

        // One that would expire before the bundles it signs would be accepted, then leave the customer unsigned.
        let dump = try cli.databaseDump()
        let tooShort = try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256", "--replace-trust-anchor", "--validity-days", "1"])
        #expect(tooShort.status != 0 && tooShort.stderr.contains("at least 86700 s") && tooShort.stderr.contains("at least 2 days"), "\(tooShort.combined)")
        #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/customers/acme/signing-key.pem"))
        #expect(try cli.databaseDump() == dump)

        let before = try #require(try cli.run(["customer", "list", "--json"]).stdoutText.data(using: .utf8))
        let rotated = try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256", "--replace-trust-anchor"])
        #expect(rotated.status == 0, "\(rotated.combined)")
        let after = try #require(try cli.run(["customer", "list", "--json"]).stdoutText.data(using: .utf8))
        #expect(Self.version(before) < Self.version(after), "the change raises the version so a new bundle is signed")
        let shownAgain = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["customer", "identity", "show", "acme", "--json"]).stdout)) as? [String: Any])
        #expect(shownAgain["signer"] as? String == "own")
        #expect(shownAgain["usable"] as? Bool == true)
        #expect(try cli.run(["log", "--json"]).stdoutText.contains("identity.set"))

        let out = cli.directory.file("out")
        #expect(try cli.run(["sign", "--out", out]).status == 0)
        #expect(try verifies("\(out)/acme.json.signed", under: "\(cli.dataDir)/customers/acme/trust-cert.pem"))
    }

    /// The customer's revocation floor: `rotate` refuses to import a certificate valid from before it (the
    /// previous one, say), changing nothing; and `identity show` calls such a certificate unusable, as the server
    /// does, when it is put in place by hand.
    @Test func aCertificateOlderThanTheFloorIsRefusedByRotateAndShownUnusable() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
        #expect(try cli.run(["customer", "add", "acme", "--key-type", "p256"]).status == 0)
        let directory = "\(cli.dataDir)/customers/acme"
        let oldKey = try cli.directory.write("old-key.pem", try bytes("\(directory)/signing-key.pem"), mode: 0o600)
        let oldCertificate = try cli.directory.write("old-cert.pem", try bytes("\(directory)/trust-cert.pem"))
        // Certificates carry whole seconds: the new one must start at least a second later.
        usleep(1_100_000)
        #expect(try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256"]).status != 0, "makes the key pending and shows it")
        #expect(try cli.run(["customer", "identity", "rotate", "acme", "--key-type", "p256", "--replace-trust-anchor"]).status == 0)
        let revoked = try OfflineRootTests().pinset(cli, ["signer", "revoke-earlier", "--customer", "acme"])
        #expect(revoked.status == 0, "\(revoked.combined)")

        let database = try cli.databaseDump()
        let installedKey = try bytes("\(directory)/signing-key.pem")
        let refused = try cli.run(["customer", "identity", "rotate", "acme", "--import-key", oldKey, "--import-certificate", oldCertificate, "--replace-trust-anchor"])
        #expect(refused.status != 0 && refused.stderr.contains("earlier than the revocation floor") && refused.stderr.contains("Nothing was changed"), "\(refused.combined)")
        #expect(try cli.databaseDump() == database)
        #expect(try bytes("\(directory)/signing-key.pem") == installedKey)

        for (source, target) in [(oldCertificate, "\(directory)/trust-cert.pem"), (oldKey, "\(directory)/signing-key.pem")] {
            let staged = try cli.directory.write("staged", try bytes(source), mode: 0o600)
            #expect(rename(staged, target) == 0)
        }
        let shown = try cli.run(["customer", "identity", "show", "acme", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [String: Any])
        #expect(report["usable"] as? Bool == false)
        #expect((report["problem"] as? String)?.contains("revocation floor") == true, "\(report)")
    }

    /// An imported signer certificate issued by the customer's anchor: the anchor is what apps embed, so it is
    /// what `customer add` prints, and the bundle carries the chain.
    @Test func anImportedChainPrintsItsAnchor() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let d = cli.directory
        try SignerPyFixture.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", d.file("ca.key"),
            "-out", d.file("ca.pem"), "-days", "60", "-subj", "/CN=acme anchor",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,digitalSignature",
        ])
        try SignerPyFixture.openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", d.file("signer.key"),
            "-out", d.file("signer.csr"), "-subj", "/CN=acme signer",
        ])
        let extensions = try d.write("signer.ext", "keyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection\n")
        try SignerPyFixture.openssl([
            "x509", "-req", "-in", d.file("signer.csr"), "-CA", d.file("ca.pem"), "-CAkey", d.file("ca.key"), "-CAcreateserial",
            "-out", d.file("signer.pem"), "-days", "30", "-extfile", extensions,
        ])
        chmod(d.file("signer.key"), 0o600)
        let chain = try d.write("chain.pem", try String(contentsOfFile: d.file("signer.pem"), encoding: .utf8) + String(contentsOfFile: d.file("ca.pem"), encoding: .utf8))
        let added = try cli.run(["customer", "add", "acme", "--import-key", d.file("signer.key"), "--import-certificate", chain])
        #expect(added.status == 0, "\(added.combined)")
        try SignerPyFixture.openssl(["x509", "-in", d.file("ca.pem"), "-outform", "der", "-out", d.file("ca.der")])
        let anchor = try Data(contentsOf: URL(fileURLWithPath: d.file("ca.der"))).base64EncodedString()
        #expect(added.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == anchor)

        let out = d.file("out")
        #expect(try cli.run(["sign", "--out", out]).status == 0)
        #expect(try verifies("\(out)/acme.json.signed", under: d.file("ca.pem")))
        #expect(try !verifies("\(out)/acme.json.signed", under: cli.trustCertificate))
    }

    /// A customer's imported chain meets the same rules as the deployment's: an intermediate whose
    /// extendedKeyUsage lacks emailProtection makes OpenSSL-based apps reject every bundle.
    @Test func anImportedChainThroughAServerAuthIntermediateIsRefused() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let pki = try LegacyClientAnchorTests.opensslIntermediateChain(in: cli.directory, intermediateExtensions: "extendedKeyUsage=serverAuth")
        let before = try cli.databaseDump()
        let added = try cli.run(["customer", "add", "acme", "--import-key", pki.key, "--import-certificate", pki.chain])
        #expect(added.status != 0)
        #expect(added.stderr.contains("'Legacy Intermediate'") && added.stderr.contains("emailProtection"), "\(added.stderr)")
        #expect(try cli.databaseDump() == before)
        #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/customers/acme/signing-key.pem"))
    }

    static func version(_ json: Data) -> Int {
        let list = (try? JSONSerialization.jsonObject(with: json)) as? [[String: Any]]
        return list?.first?["version"] as? Int ?? -1
    }
}
