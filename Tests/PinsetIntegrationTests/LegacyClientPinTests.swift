import Foundation
import PinsetTestSupport
import Testing

/// What legacy GCX clients can do with the pins Pinset publishes, checked with `LegacyGCXClient` (the same
/// OpenSSL calls the GCX v1.2.1 client makes).
@Suite(.serialized) struct LegacyClientPinTests {
    /// A self-signed certificate for `name`: `rsa` or an EC P-256 key.
    static func certificate(_ name: String, rsa: Bool = false, in directory: TemporaryDirectory) throws -> (cert: String, der: [UInt8], publicKey: String) {
        let key = directory.file("\(name).key"), cert = directory.file("\(name).pem"), pub = directory.file("\(name).pub")
        let keyMade = rsa
            ? try ProcessRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
            : try ProcessRunner.run("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key])
        #expect(keyMade.status == 0, "\(keyMade.stderr)")
        let made = try ProcessRunner.run("openssl", ["req", "-new", "-x509", "-key", key, "-out", cert, "-days", "30", "-subj", "/CN=\(name)"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try ProcessRunner.run("openssl", ["pkey", "-in", key, "-pubout", "-out", pub]).status == 0)
        let der = try ProcessRunner.run("openssl", ["x509", "-in", cert, "-outform", "DER"]).stdout
        return (cert, der, pub)
    }

    /// Signs every bundle with `pinset sign --out` and returns the customer's.
    static func signedBundle(_ cli: PinsetCLI, customer: String) throws -> [UInt8] {
        let out = cli.directory.file("out")
        let signed = try cli.run(["sign", "--out", out])
        #expect(signed.status == 0, "\(signed.combined)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(out)/\(customer).json.signed")))
    }

    static func legacyClient(_ cli: PinsetCLI) throws -> LegacyGCXClient {
        let anchor = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/trust-cert.der")))
        return try LegacyGCXClient(anchorDER: anchor, directory: cli.directory.path)
    }

    static func hostsJSON(_ cli: PinsetCLI, _ customer: String) throws -> [[String: Any]] {
        let shown = try cli.run(["customer", "show", customer, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [String: Any])
        return try #require(object["hosts"] as? [[String: Any]])
    }

    @Test func hashOnlyPinsAreInvisibleToLegacyClientsAndReported() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let leaf = try Self.certificate("leaf", in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let leafPin = try CLIPinSourceTests.opensslPin(certificate: leaf.cert)
        let hashed = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", leafPin,
                                  "--hash", "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="])
        #expect(hashed.status == 0, "\(hashed.combined)")
        #expect(hashed.stderr.contains("0 pins legacy GCX clients can use"), "\(hashed.stderr)")

        // Two pins satisfy the backup rule, yet the legacy client refuses the host's real certificate.
        let legacy = try Self.legacyClient(cli)
        var payload = try legacy.accept(bundle: try Self.signedBundle(cli, customer: "acme"))
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [leaf.der], payload: payload) == false)
        var hosts = try Self.hostsJSON(cli, "acme")
        #expect(hosts.first?["legacyUsablePins"] as? Int == 0)
        let listed = try cli.run(["host", "list", "acme", "--json"])
        let listedHosts = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [[String: Any]])
        #expect(listedHosts.first?["legacyUsablePins"] as? Int == 0)
        #expect(try cli.run(["host", "list", "acme"]).stdoutText.contains("LEGACY-USABLE"))

        // A certificate pin publishes its fp: the legacy client connects with it, and the report agrees.
        let backup = try Self.certificate("backup", in: cli.directory)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", backup.cert]).status == 0)
        payload = try legacy.accept(bundle: try Self.signedBundle(cli, customer: "acme"))
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [backup.der], payload: payload))
        hosts = try Self.hostsJSON(cli, "acme")
        #expect(hosts.first?["legacyUsablePins"] as? Int == 1)
        let pins = try #require(hosts.first?["pins"] as? [[String: Any]])
        #expect(pins.compactMap { $0["legacyUse"] as? [String] }.filter { !$0.isEmpty } == [["fp"]])
        let table = try cli.run(["customer", "show", "acme"])
        #expect(table.stdoutText.contains("legacy clients can use 1 of 3 pins"), "\(table.stdoutText)")
        #expect(table.stderr.contains("1 pin legacy GCX clients can use"), "\(table.stderr)")
    }

    /// Only RSA keys load in the GCX client: an RSA `pk` matches, an EC `pk` never does, and the report says so.
    @Test func onlyRSAPublicKeysAreUsableByLegacyClients() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let rsa = try Self.certificate("rsa-leaf", rsa: true, in: cli.directory)
        let ec = try Self.certificate("ec-leaf", in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--public-key", rsa.publicKey, "--public-key", ec.publicKey])
        #expect(added.status == 0, "\(added.combined)")

        let legacy = try Self.legacyClient(cli)
        let payload = try legacy.accept(bundle: try Self.signedBundle(cli, customer: "acme"))
        #expect(payload.hosts.first?.pk.count == 2)
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [rsa.der], payload: payload))
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [ec.der], payload: payload) == false)

        let hosts = try Self.hostsJSON(cli, "acme")
        #expect(hosts.first?["legacyUsablePins"] as? Int == 1)
        let uses = try #require(hosts.first?["pins"] as? [[String: Any]]).compactMap { $0["legacyUse"] as? [String] }
        #expect(uses.sorted { $0.count < $1.count } == [[], ["pk"]])
    }

    /// For a customer marked as serving legacy clients, an edit that leaves a host with fewer than two usable
    /// pins is refused and changes nothing; a host must come with its pins.
    @Test func legacyCustomersRefuseEditsThatLeaveTooFewUsablePins() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let leaf = try Self.certificate("leaf", in: cli.directory)
        let backup = try Self.certificate("backup", in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme", "--legacy-clients"]).status == 0)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["customer", "list", "--json"]).stdout)) as? [[String: Any]])
        #expect(listed.first?["servesLegacyClients"] as? Bool == true)

        var before = try cli.databaseDump()
        let bare = try cli.run(["host", "add", "acme", "api.example.com"])
        #expect(bare.status != 0)
        #expect(bare.stderr.contains("serves legacy GCX clients"), "\(bare.stderr)")
        #expect(try cli.run(["host", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", leaf.cert]).status != 0)
        #expect(try cli.databaseDump() == before)
        let withPins = try cli.run(["host", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", leaf.cert, "--certificate", backup.cert])
        #expect(withPins.status == 0, "\(withPins.combined)")
        #expect(!withPins.stderr.contains("warning"), "\(withPins.stderr)")
        let legacy = try Self.legacyClient(cli)
        let payload = try legacy.accept(bundle: try Self.signedBundle(cli, customer: "acme"))
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [backup.der], payload: payload))

        before = try cli.databaseDump()
        let removal = try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", try CLIPinSourceTests.opensslPin(certificate: leaf.cert)])
        #expect(removal.status != 0)
        #expect(removal.stderr.contains("Add the replacement certificate first"), "\(removal.stderr)")
        #expect(try cli.databaseDump() == before)

        // A host added while the protection was off gets only pins legacy clients can use; it may gain them one
        // at a time, with a warning while it is short. The setting itself publishes nothing new.
        #expect(try cli.run(["customer", "update", "acme", "--no-legacy-clients"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "www.example.com"]).status == 0)
        func shown() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["customer", "show", "acme", "--json"]).stdout)) as? [String: Any])
        }
        let versionBefore = try #require(try shown()["version"] as? Int64)
        let enabled = try cli.run(["customer", "update", "acme", "--legacy-clients"])
        #expect(enabled.status == 0, "\(enabled.combined)")
        #expect(try shown()["version"] as? Int64 == versionBefore)
        #expect(try shown()["servesLegacyClients"] as? Bool == true)
        #expect(enabled.stderr.contains("www.example.com has 0 pins legacy GCX clients can use"), "\(enabled.stderr)")
        before = try cli.databaseDump()
        let hashes = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "www.example.com", "--hash", try CLIPinSourceTests.opensslPin(certificate: leaf.cert),
                                  "--hash", try CLIPinSourceTests.opensslPin(certificate: backup.cert)])
        #expect(hashes.status != 0)
        #expect(hashes.stderr.contains("serves legacy GCX clients"), "\(hashes.stderr)")
        #expect(hashes.stderr.contains("'pinset pin add' with --certificate, --from-host, --certificate-sha256 or an RSA --public-key"), "\(hashes.stderr)")
        #expect(try cli.databaseDump() == before)
        let one = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "www.example.com", "--certificate", leaf.cert])
        #expect(one.status == 0, "\(one.combined)")
        #expect(one.stderr.contains("www.example.com has 1 pin legacy GCX clients can use"), "\(one.stderr)")
        let both = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "www.example.com", "--certificate", leaf.cert, "--certificate", backup.cert])
        #expect(both.status == 0, "\(both.combined)")
        #expect(!both.stderr.contains("legacy GCX clients can use"), "\(both.stderr)")

        // Turned off, the refused removal goes through with a warning.
        #expect(try cli.run(["customer", "update", "acme", "--no-legacy-clients"]).status == 0)
        let allowed = try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", try CLIPinSourceTests.opensslPin(certificate: leaf.cert)])
        #expect(allowed.status == 0, "\(allowed.combined)")
        #expect(allowed.stderr.contains("1 pin legacy GCX clients can use"), "\(allowed.stderr)")
        let log = try cli.run(["log", "--json"]).stdoutText
        #expect(log.contains("customer.update"))
    }

    /// The published `hostname` keeps the operator's case, which the legacy client compares exactly.
    @Test func mixedCaseHostNamesArePublishedAsGiven() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let leaf = try Self.certificate("leaf", in: cli.directory)
        let backup = try Self.certificate("backup", in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let added = try cli.run(["host", "add", "acme", "API.Example.com"])
        #expect(added.status == 0, "\(added.combined)")
        #expect(added.stderr.contains("publish it as 'API.Example.com'"), "\(added.stderr)")
        // The normalised name stays the key: the same name in another case is the same host.
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status != 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.COM", "--certificate", leaf.cert, "--certificate", backup.cert]).status == 0)

        let bundle = try Self.signedBundle(cli, customer: "acme")
        let legacy = try Self.legacyClient(cli)
        let payload = try legacy.accept(bundle: bundle)
        #expect(payload.hosts.map(\.hostname) == ["API.Example.com"])
        #expect(try legacy.acceptsConnection(to: "API.Example.com", chain: [leaf.der], payload: payload))
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [leaf.der], payload: payload) == false)

        // The published schema allows the spelling.
        let content = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-CAfile", legacy.anchorPEMPath], stdin: bundle)
        let payloadPath = try cli.directory.write("payload.json", content.stdout)
        let validated = try PublishedPayloadSchema.validate(payloadAt: payloadPath)
        #expect(validated.status == 0, "\(validated.stderr)")

        // Pinset's own verifier reads it too and prints the published spelling with every pin form.
        let bundlePath = try cli.directory.write("acme.json.signed", bundle)
        let verified = try cli.run(["verify", bundlePath, "--trust", cli.trustCertificate])
        #expect(verified.status == 0, "\(verified.combined)")
        #expect(verified.stdoutText.contains("host API.Example.com:443"), "\(verified.stdoutText)")
        let hosts = try Self.hostsJSON(cli, "acme")
        #expect(hosts.first?["hostname"] as? String == "api.example.com")
        #expect(hosts.first?["publishedHostname"] as? String == "API.Example.com")
    }

    /// `pinset verify` prints `pk` beside `pin-sha256` and `fp`.
    @Test func verifyPrintsPublicKeys() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let leaf = try Self.certificate("leaf", in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", leaf.cert]).status == 0)
        let bundlePath = try cli.directory.write("acme.json.signed", try Self.signedBundle(cli, customer: "acme"))
        let spki = try ProcessRunner.run("openssl", ["pkey", "-pubin", "-in", leaf.publicKey, "-outform", "DER"]).stdout
        let expected = Data(spki).base64EncodedString()

        let text = try cli.run(["verify", bundlePath, "--trust", cli.trustCertificate])
        #expect(text.stdoutText.contains("pk         \(expected)"), "\(text.stdoutText)")
        let json = try cli.run(["verify", bundlePath, "--trust", cli.trustCertificate, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        let hashes = try #require(object["hashes"] as? [[String: Any]])
        #expect(hashes.first?["pk"] as? [String] == [expected])
    }

    @Test func signHelpNamesTheTimerThatShips() throws {
        let help = try ProcessRunner.run(PinsetCLI.binary, ["sign", "--help"])
        let text = help.stdoutText.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        #expect(text.contains("deploy/systemd/pinset-sign.timer"), "\(help.stdoutText)")
        let path = SourceTree.path("deploy/systemd/pinset-sign.timer")
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
