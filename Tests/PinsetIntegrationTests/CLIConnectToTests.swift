import Foundation
import PinsetTestSupport
import Testing

/// `pin add --from-host NAME:PORT --connect-to ADDRESS`: reach a name at another address (staging, one
/// load-balancer member, loopback) while sending and validating the name.
@Suite(.serialized) struct CLIConnectToTests {
    /// A CA and two server certificates it issues: one for `api.example.test`, one for `default.example.test`.
    static func serverPKI(in directory: TemporaryDirectory) throws -> (ca: String, named: (cert: String, key: String), fallback: (cert: String, key: String)) {
        func run(_ arguments: [String]) throws {
            let result = try ProcessRunner.run("openssl", arguments)
            #expect(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        let caKey = directory.file("ca.key"), ca = directory.file("ca.pem")
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", caKey])
        try run(["req", "-new", "-x509", "-key", caKey, "-out", ca, "-days", "30", "-subj", "/CN=Connect-To Test CA"])
        func server(_ name: String) throws -> (cert: String, key: String) {
            let key = directory.file("\(name).key"), request = directory.file("\(name).csr"), cert = directory.file("\(name).pem")
            try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key])
            try run(["req", "-new", "-key", key, "-out", request, "-subj", "/CN=\(name)"])
            let extensions = try directory.write("\(name).ext", "subjectAltName=DNS:\(name)\nextendedKeyUsage=serverAuth\n")
            try run(["x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "30", "-out", cert, "-extfile", extensions])
            return (cert, key)
        }
        return (ca, try server("api.example.test"), try server("default.example.test"))
    }

    /// Another key and certificate for `name` from the CA of ``serverPKI(in:)``, as a renewal that replaces the key
    /// makes: valid for the name, but not pinned.
    static func renewedCertificate(for name: String = "api.example.test", in directory: TemporaryDirectory) throws -> (cert: String, key: String) {
        let key = directory.file("renewed.key"), request = directory.file("renewed.csr"), cert = directory.file("renewed.pem")
        for arguments in [
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key],
            ["req", "-new", "-key", key, "-out", request, "-subj", "/CN=\(name)"],
            ["x509", "-req", "-in", request, "-CA", directory.file("ca.pem"), "-CAkey", directory.file("ca.key"), "-CAcreateserial", "-days", "30",
             "-out", cert, "-extfile", directory.file("\(name).ext")],
        ] {
            let made = try ProcessRunner.run("openssl", arguments)
            guard made.status == 0 else { throw Failure("openssl \(arguments.joined(separator: " ")): \(made.stderr)") }
        }
        return (cert, key)
    }

    @Test func pinsANameServedAtAnotherAddress() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let pki = try Self.serverPKI(in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.test"]).status == 0)
        let port = try FreePort.pick()
        // The server presents the api.example.test certificate only to clients that send that name (SNI).
        let sServer = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", pki.fallback.cert, "-key", pki.fallback.key,
            "-servername", "api.example.test", "-cert2", pki.named.cert, "-key2", pki.named.key, "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server")
        defer { sServer.stop() }
        #expect(FreePort.waitUntilListening(port: port))

        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.test", "--from-host", "api.example.test:\(port)",
                                 "--connect-to", "127.0.0.1", "--ca-file", pki.ca])
        #expect(added.status == 0, "\(added.combined)")
        let shown = try cli.run(["customer", "show", "acme", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [String: Any])
        let pins = try #require((object["hosts"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]])
        #expect(pins.compactMap { $0["pinSHA256"] as? String } == [try CLIPinSourceTests.opensslPin(certificate: pki.named.cert)])
        #expect(pins.first?["source"] as? String == "live:api.example.test:\(port) via 127.0.0.1")

        // Another name at the same address gets the other certificate, which is not valid for that name.
        #expect(try cli.run(["host", "add", "acme", "other.example.test"]).status == 0)
        let before = try cli.databaseDump()
        let mismatch = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "other.example.test", "--from-host", "other.example.test:\(port)",
                                    "--connect-to", "127.0.0.1:\(port)", "--ca-file", pki.ca])
        #expect(mismatch.status != 0)
        #expect(mismatch.stderr.contains("does not validate"), "\(mismatch.stderr)")
        #expect(try cli.databaseDump() == before)
    }

    @Test func badConnectToValuesAreRefused() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.test"]).status == 0)
        let before = try cli.databaseDump()
        for value in ["127.0.0.1:99999", "[::1", "", "a b"] {
            let result = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.test", "--from-host", "api.example.test:443", "--connect-to", value])
            #expect(result.status != 0, "\(value): \(result.combined)")
            #expect(result.stderr.contains("--connect-to"), "\(value): \(result.stderr)")
        }
        let withoutHost = try cli.run(["pin", "add", "acme", "api.example.test", "--hash", "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "--connect-to", "127.0.0.1"])
        #expect(withoutHost.status != 0)
        #expect(try cli.databaseDump() == before)
    }
}
