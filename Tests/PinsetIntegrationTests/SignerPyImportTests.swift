#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset import signer-py` against a signer.py directory made with openssl, then `pinset serve`, checked
/// with `openssl smime -verify` exactly as signer.py checks its own output and GCX clients check bundles.
@Suite(.serialized) struct SignerPyImportTests {
    static let customers = ["alpha", "bravo", "charlie"]
    /// The fixture's hosts are not served: these imports skip the live-chain check.
    static let unserved = ["--skip-live-check", "--reason", "fixture hosts are not served"]

    /// The imported hosts' pins are checked against the chains they serve: an import whose hosts cannot be
    /// reached is refused and changes nothing; served with their pinned certificates (one loopback s_server
    /// choosing the certificate by SNI), the import goes ahead and the audit log says what was checked.
    @Test func importedHostsAreCheckedAgainstTheirLiveChains() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let signer = try SignerPyFixture.make(in: cli.directory, customers: ["alpha"])
        let hosts = "\(signer.root)/hosts"
        let roots = try cli.directory.write("roots.pem", try ["api.alpha.example", "www.alpha.example"]
            .map { try String(contentsOfFile: "\(hosts)/\($0).pem", encoding: .utf8) }.joined())
        let port = try FreePort.pick()
        let reach = ["--connect-to", "127.0.0.1:\(port)", "--ca-file", roots]

        // Nothing listens yet: refused, nothing changed.
        let dump = try cli.databaseDump()
        let files = SignerPyFixture.listing(cli.dataDir)
        let refused = try cli.run(["import", "signer-py", signer.root] + reach)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Nothing was imported"), "\(refused.stderr)")
        #expect(refused.stderr.contains("alpha/api.alpha.example:443 (unreachable)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--skip-live-check --reason"), "\(refused.stderr)")
        #expect(try cli.databaseDump() == dump)
        #expect(SignerPyFixture.listing(cli.dataDir) == files)

        let server = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", "\(hosts)/www.alpha.example.pem", "-key", "\(hosts)/www.alpha.example.key",
            "-servername", "api.alpha.example", "-cert2", "\(hosts)/api.alpha.example.pem", "-key2", "\(hosts)/api.alpha.example.key", "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server")
        defer { server.stop() }
        #expect(FreePort.waitUntilListening(port: port))

        let dryRun = try cli.run(["import", "signer-py", signer.root, "--dry-run"] + reach)
        #expect(dryRun.status == 0, "\(dryRun.combined)")
        #expect(dryRun.stdoutText.contains("matches"), "\(dryRun.stdoutText)")
        #expect(try cli.databaseDump() == dump)

        let imported = try cli.run(["import", "signer-py", signer.root] + reach)
        #expect(imported.status == 0, "\(imported.combined)")
        let log = try cli.run(["log", "--json"])
        #expect(log.stdoutText.contains("live chains checked: 2 host(s), 2 matches"), "\(log.stdoutText)")
    }

    @Test func aForcedImportRecordsItsReason() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let signer = try SignerPyFixture.make(in: cli.directory, customers: ["alpha"])
        let imported = try cli.run(["import", "signer-py", signer.root, "--skip-live-check", "--reason", "hosts only reachable from the office"])
        #expect(imported.status == 0, "\(imported.combined)")
        let log = try cli.run(["log", "--json"])
        #expect(log.stdoutText.contains("live-chain check skipped with --skip-live-check: hosts only reachable from the office"), "\(log.stdoutText)")
        let unexplained = try cli.run(["import", "signer-py", signer.root, "--skip-live-check"])
        #expect(unexplained.status != 0)
        #expect(unexplained.stderr.contains("--skip-live-check needs --reason"), "\(unexplained.stderr)")
    }

    @Test func importedCustomersAreServedUnderTheirOwnCertificates() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        // One RSA-4096 key as signer.py makes them; the others 2048 bits to keep the test quick.
        let signer = try SignerPyFixture.make(in: cli.directory, customers: Self.customers, rsaBits: ["alpha": 4096])

        let dryRun = try cli.run(["import", "signer-py", signer.root, "--dry-run"] + Self.unserved)
        #expect(dryRun.status == 0, "\(dryRun.combined)")
        #expect(dryRun.stdoutText.contains("would import alpha"))
        #expect(try cli.run(["customer", "list", "--json"]).stdoutText.contains("alpha") == false)

        let imported = try cli.run(["import", "signer-py", signer.root] + Self.unserved)
        #expect(imported.status == 0, "\(imported.combined)")
        for customer in Self.customers {
            let key = "\(cli.dataDir)/customers/\(customer)/signing-key.pem"
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int)
            #expect(mode == 0o600)
        }
        let log = try cli.run(["log", "--json"])
        #expect(log.stdoutText.contains("customer.import"))

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        for (index, customer) in Self.customers.enumerated() {
            let response = try CurlResponse.get("\(server.baseURL)/\(customer).json.signed", in: cli.directory)
            #expect(response.status == 200, "\(customer): \(String(decoding: response.body, as: UTF8.self))")
            let bundle = try cli.directory.write("\(customer).json.signed", response.body)
            let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", "\(signer.root)/output/\(customer).pem"])
            #expect(verified.status == 0, "\(customer): \(verified.stderr)")
            let other = Self.customers[(index + 1) % Self.customers.count]
            let wrong = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", "\(signer.root)/output/\(other).pem"])
            #expect(wrong.status != 0, "\(customer)'s bundle must not verify under \(other)'s certificate")

            let payload = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])
            #expect(payload["customer"] as? String == customer)
            let served = try #require(payload["hashes"] as? [[String: Any]])
            #expect(Self.legacyHashes(served) == Self.legacyHashes(try #require(signer.hashes[customer])))
        }
        #expect(server.stop() == 0)
    }

    /// signer.py's own bundle (`openssl smime -sign -nodetach -outform der` over `json.dumps(payload)`) and
    /// Pinset's bundle for the same customer pass the same `openssl smime -verify`, and Pinset's payload has
    /// every key of signer.py's with the same JSON type.
    @Test func pinsetBundlesAreASupersetOfSignerPyBundles() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let signer = try SignerPyFixture.make(in: cli.directory, customers: ["delta"])
        #expect(try cli.run(["import", "signer-py", signer.root] + Self.unserved).status == 0)

        let entries = try #require(signer.hashes["delta"])
        let legacyPayload = "{\"customer\": \"delta\", \"hashes\": \(SignerPyFixture.pythonJSON(entries)), \"timestamp\": \(Int(Date().timeIntervalSince1970))}"
        let payloadFile = try cli.directory.write("delta-payload.json", legacyPayload)
        let legacyBundle = cli.directory.file("delta-legacy.json.signed")
        try SignerPyFixture.openssl([
            "smime", "-sign", "-nodetach", "-signer", "\(signer.root)/output/delta.pem", "-inkey", "\(signer.root)/certs/delta.key",
            "-outform", "der", "-in", payloadFile, "-out", legacyBundle,
        ])

        let out = cli.directory.file("out")
        let signed = try cli.run(["sign", "--out", out])
        #expect(signed.status == 0, "\(signed.combined)")
        var payloads: [[String: Any]] = []
        for bundle in [legacyBundle, "\(out)/delta.json.signed"] {
            let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", "\(signer.root)/output/delta.pem"])
            #expect(verified.status == 0, "\(bundle): \(verified.stderr)")
            payloads.append(try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any]))
        }
        let (legacy, pinset) = (payloads[0], payloads[1])
        for (key, value) in legacy {
            #expect(Self.jsonType(pinset[key]) == Self.jsonType(value), "key \(key)")
        }
        let legacyHosts = try #require(legacy["hashes"] as? [[String: Any]])
        let pinsetHosts = try #require(pinset["hashes"] as? [[String: Any]])
        for (legacyHost, pinsetHost) in zip(legacyHosts.sorted { "\($0["hostname"]!)" < "\($1["hostname"]!)" }, pinsetHosts) {
            for (key, value) in legacyHost {
                #expect(Self.jsonType(pinsetHost[key]) == Self.jsonType(value), "hashes[].\(key)")
            }
        }
        #expect(Self.legacyHashes(pinsetHosts) == Self.legacyHashes(legacyHosts))
    }

    /// The `.json` is what signer.py served, so its spelling of a host name is the one imported and published,
    /// whatever case the `.domains` file uses (docs/migration.md).
    @Test func importedHostNamesKeepTheSpellingOfTheJSONFile() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let signer = try SignerPyFixture.make(in: cli.directory, customers: ["delta"])
        let jsonPath = "\(signer.root)/data/delta.json", domainsPath = "\(signer.root)/data/delta.domains"
        let json = try String(contentsOfFile: jsonPath, encoding: .utf8)
        try json.replacingOccurrences(of: "api.delta.example", with: "API.Delta.example").write(toFile: jsonPath, atomically: true, encoding: .utf8)
        let domains = try String(contentsOfFile: domainsPath, encoding: .utf8)
        try domains.replacingOccurrences(of: "www.delta.example", with: "WWW.DELTA.EXAMPLE").write(toFile: domainsPath, atomically: true, encoding: .utf8)
        let imported = try cli.run(["import", "signer-py", signer.root] + Self.unserved)
        #expect(imported.status == 0, "\(imported.combined)")

        let out = cli.directory.file("out")
        #expect(try cli.run(["sign", "--out", out]).status == 0)
        let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", "\(out)/delta.json.signed", "-CAfile", "\(signer.root)/output/delta.pem"])
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])
        let names = Set((payload["hashes"] as? [[String: Any]] ?? []).compactMap { $0["hostname"] as? String })
        #expect(names == ["API.Delta.example", "www.delta.example"], "\(names)")
    }

    @Test func badInputImportsNothing() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "bravo"]).status == 0)
        let signer = try SignerPyFixture.make(in: cli.directory, customers: ["alpha", "charlie"])
        let originalJSON = try Data(contentsOf: URL(fileURLWithPath: "\(signer.root)/data/charlie.json"))

        func refused(_ expected: [String], _ prepare: () throws -> Void, restore: () throws -> Void) throws {
            try prepare()
            defer { try? restore() }
            let dump = try cli.databaseDump()
            let files = SignerPyFixture.listing(cli.dataDir)
            let result = try cli.run(["import", "signer-py", signer.root] + Self.unserved)
            #expect(result.status != 0)
            for text in expected {
                #expect(result.stderr.contains(text), "expected '\(text)' in: \(result.stderr)")
            }
            #expect(result.stderr.contains("Nothing was imported"))
            #expect(try cli.databaseDump() == dump)
            #expect(SignerPyFixture.listing(cli.dataDir) == files)
        }

        // A .json that disagrees with the .domains file.
        try refused(["charlie.domains line 2", "www.charlie.example:8443"], {
            let entries = try #require(signer.hashes["charlie"])
            try Data(SignerPyFixture.pythonJSON([entries[0]]).utf8).write(to: URL(fileURLWithPath: "\(signer.root)/data/charlie.json"))
        }, restore: { try originalJSON.write(to: URL(fileURLWithPath: "\(signer.root)/data/charlie.json")) })

        // A malformed .domains line.
        let domains = "\(signer.root)/data/alpha.domains"
        let originalDomains = try Data(contentsOf: URL(fileURLWithPath: domains))
        try refused(["alpha.domains line 3", "not hostname:port"], {
            try (originalDomains + Data("api.alpha.example\n".utf8)).write(to: URL(fileURLWithPath: domains))
        }, restore: { try originalDomains.write(to: URL(fileURLWithPath: domains)) })

        // A malformed .json entry.
        try refused(["charlie.json entry 2 (line 1)", "'fp'"], {
            var entries = try #require(signer.hashes["charlie"])
            entries[1]["fp"] = ["ABCDEF"]
            try Data(SignerPyFixture.pythonJSON(entries).utf8).write(to: URL(fileURLWithPath: "\(signer.root)/data/charlie.json"))
        }, restore: { try originalJSON.write(to: URL(fileURLWithPath: "\(signer.root)/data/charlie.json")) })

        // A key that group and others can read.
        let key = "\(signer.root)/certs/alpha.key"
        try refused(["alpha.key", "chmod 600"], { chmod(key, 0o644) }, restore: { chmod(key, 0o600) })

        // A customer that already exists: bravo is in Pinset, and its files would be imported too.
        let bravo = try SignerPyFixture.make(in: try TemporaryDirectory(prefix: "bravo"), customers: ["bravo"])
        for file in ["certs/bravo.key", "output/bravo.pem", "output/bravo.crt", "data/bravo.domains", "data/bravo.json"] {
            try FileManager.default.copyItem(atPath: "\(bravo.root)/\(file)", toPath: "\(signer.root)/\(file)")
        }
        try refused(["bravo.domains", "already exists"], {}, restore: {})
    }

    /// The `fp` and `pk` lists per host and port, order-insensitive (Pinset sorts them).
    static func legacyHashes(_ entries: [[String: Any]]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for entry in entries {
            let key = "\(entry["hostname"] ?? ""):\(entry["port"] ?? "")"
            result[key] = ((entry["fp"] as? [String] ?? []).sorted().map { "fp " + $0 }) + ((entry["pk"] as? [String] ?? []).sorted().map { "pk " + $0 })
        }
        return result
    }

    static func jsonType(_ value: Any?) -> String {
        switch value {
        case nil: "missing"
        case is String: "string"
        case is [Any]: "array"
        case is [String: Any]: "object"
        case is NSNumber: "number"
        default: "other"
        }
    }
}
