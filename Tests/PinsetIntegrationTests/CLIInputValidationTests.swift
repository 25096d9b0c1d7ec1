import Foundation
import PinsetTestSupport
import Testing

/// Bad input never changes stored data: each command must fail with a clear message and leave the
/// database byte-for-byte the same as `sqlite3 .dump` sees it.
@Suite(.serialized) struct CLIInputValidationTests {
    static let validHash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    func withPopulatedDatabase(_ body: (PinsetCLI) throws -> Void) throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.validHash]).status == 0)
        try body(cli)
    }

    func expectRejected(_ cli: PinsetCLI, _ arguments: [String], mentioning phrase: String) throws {
        let before = try cli.databaseDump()
        let result = try cli.run(arguments)
        #expect(result.status != 0, "'\(arguments.joined(separator: " "))' should fail")
        #expect(result.stderr.localizedCaseInsensitiveContains(phrase), "stderr should mention '\(phrase)': \(result.stderr)")
        #expect(try cli.databaseDump() == before, "'\(arguments.joined(separator: " "))' changed the database")
    }

    /// A time before 1970 is named as such, whether given as Unix seconds or ISO 8601.
    @Test func revocationFloorBefore1970() throws {
        try withPopulatedDatabase { cli in
            for time in ["-5", "1960-01-01T00:00:00Z"] {
                try expectRejected(cli, ["signer", "revoke-earlier", "--not-before=\(time)", "--data-dir", cli.dataDir], mentioning: "is before 1970")
            }
        }
    }

    @Test func badBase64() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "not*base64"], mentioning: "not valid base64")
        }
    }

    @Test func wrongHashLength() throws {
        try withPopulatedDatabase { cli in
            // A SHA-1 sized hash (20 bytes).
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "2jmj7l5rSw0yVb/vlWAYkK/YBwk="], mentioning: "32 bytes")
        }
    }

    @Test func oneBadInputAmongGoodOnesAddsNothing() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, [
                "pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "--hash", "AAAA",
            ], mentioning: "bytes")
        }
    }

    @Test func unknownCustomer() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "nobody", "api.example.com", "--hash", Self.validHash], mentioning: "does not exist")
            try expectRejected(cli, ["host", "add", "nobody", "api.example.com"], mentioning: "does not exist")
            try expectRejected(cli, ["customer", "remove", "nobody"], mentioning: "does not exist")
        }
    }

    @Test func unknownHost() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "other.example.com", "--hash", Self.validHash], mentioning: "host")
        }
    }

    @Test func nonCertificateFile() throws {
        try withPopulatedDatabase { cli in
            let file = try cli.directory.write("notes.txt", "this is not a certificate\n")
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", file], mentioning: "certificate")
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--public-key", file], mentioning: "public key")
            try expectRejected(cli, ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", cli.directory.file("missing.pem")], mentioning: "missing.pem")
        }
    }

    @Test func invalidNames() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, ["customer", "add", "../etc"], mentioning: "customer name")
            try expectRejected(cli, ["customer", "add", "ACME"], mentioning: "exists")
            try expectRejected(cli, ["host", "add", "acme", "*.example.com"], mentioning: "wildcard")
            try expectRejected(cli, ["host", "add", "acme", "\u{212A}.example.com"], mentioning: "non-ASCII")
            try expectRejected(cli, ["host", "add", "acme", "\u{0130}.example.com"], mentioning: "non-ASCII")
            try expectRejected(cli, ["pin", "add", "acme", "api.\u{212A}.example.com", "--hash", Self.validHash], mentioning: "non-ASCII")
            try expectRejected(cli, ["host", "add", "acme", "api.example.com", "--port", "70000"], mentioning: "port")
        }
    }

    @Test func lastPinNeedsExplicitFlag() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, ["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.validHash], mentioning: "--allow-last-pin")
            let result = try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.validHash, "--allow-last-pin"])
            #expect(result.status == 0, "\(result.combined)")
        }
    }

    @Test func lastHostNeedsExplicitFlag() throws {
        try withPopulatedDatabase { cli in
            try expectRejected(cli, ["host", "remove", "acme", "api.example.com"], mentioning: "--allow-last-host")
            let result = try cli.run(["host", "remove", "acme", "api.example.com", "--allow-last-host"])
            #expect(result.status == 0, "\(result.combined)")
            let hosts = try cli.run(["host", "list", "acme", "--json"])
            #expect(hosts.status == 0 && !hosts.stdoutText.contains("api.example.com"), "\(hosts.combined)")
        }
    }

    @Test func worldReadableKeyIsRefused() throws {
        try withPopulatedDatabase { cli in
            chmod("\(cli.dataDir)/signing-key.pem", 0o644)
            let out = cli.directory.file("out")
            try expectRejected(cli, ["sign", "--out", out], mentioning: "chmod 600")
            let serve = try cli.run(["serve", "--data-dir", cli.dataDir, "--port", "0"])
            #expect(serve.status != 0)
            #expect(serve.stderr.contains("chmod 600"), "\(serve.stderr)")
        }
    }

    @Test func singlePinIsFlaggedOnEveryEdit() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let host = try cli.run(["host", "add", "acme", "api.example.com"])
        #expect(host.stderr.contains("has 0 pins"), "\(host.stderr)")
        let one = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.validHash])
        #expect(one.stderr.contains("has 1 pin"), "\(one.stderr)")
        let two = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="])
        #expect(!two.stderr.contains("pin at least"), "\(two.stderr)")
        // Two pins known only by hash are still none for legacy GCX clients.
        #expect(two.stderr.contains("has 0 pins legacy GCX clients can use"), "\(two.stderr)")
    }

    @Test func initRefusesToReplaceAKey() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let before = try String(contentsOfFile: "\(cli.dataDir)/signing-key.pem", encoding: .utf8)
        let again = try cli.run(["init"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already exists"))
        #expect(try String(contentsOfFile: "\(cli.dataDir)/signing-key.pem", encoding: .utf8) == before)
        let mode = try FileManager.default.attributesOfItem(atPath: "\(cli.dataDir)/signing-key.pem")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
