#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Every pin source produces the pin OpenSSL computes for the same key.
@Suite(.serialized) struct CLIPinSourceTests {
    /// `openssl`'s SPKI SHA-256 of a certificate file: the reference the CLI must agree with.
    static func opensslPin(certificate path: String) throws -> String {
        let script = "openssl x509 -in '\(path)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
        return try ProcessRunner.run("/bin/sh", ["-c", script]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func makeCertificate(in directory: TemporaryDirectory, name: String, curve: String = "prime256v1") throws -> (key: String, cert: String) {
        let key = directory.file("\(name).key"), cert = directory.file("\(name).pem")
        #expect(try ProcessRunner.run("openssl", ["ecparam", "-name", curve, "-genkey", "-noout", "-out", key]).status == 0)
        let made = try ProcessRunner.run("openssl", [
            "req", "-new", "-x509", "-key", key, "-out", cert, "-days", "30", "-subj", "/CN=\(name)",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        return (key, cert)
    }

    /// `openssl s_server` on `127.0.0.1:port` with `certificate`, listening when it returns; stop it by its pid.
    static func serveTLS(_ certificate: (key: String, cert: String), port: Int, logDirectory: String) throws -> BackgroundProcess {
        let server = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate.cert, "-key", certificate.key, "-www", "-quiet",
        ], logDirectory: logDirectory, name: "s_server")
        #expect(FreePort.waitUntilListening(port: port))
        return server
    }

    func pins(_ cli: PinsetCLI) throws -> [[String: Any]] {
        let shown = try cli.run(["customer", "show", "acme", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [String: Any])
        let hosts = try #require(object["hosts"] as? [[String: Any]])
        return try #require(hosts.first?["pins"] as? [[String: Any]])
    }

    @Test func pinsFromCertificatesAndKeys() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com", "--include-subdomains"]).status == 0)
        let pem = try Self.makeCertificate(in: cli.directory, name: "leaf")
        let der = cli.directory.file("backup.der")
        let backup = try Self.makeCertificate(in: cli.directory, name: "backup", curve: "secp384r1")
        #expect(try ProcessRunner.run("openssl", ["x509", "-in", backup.cert, "-outform", "der", "-out", der]).status == 0)
        let third = try Self.makeCertificate(in: cli.directory, name: "third")
        let publicKey = cli.directory.file("third.pub")
        #expect(try ProcessRunner.run("openssl", ["pkey", "-in", third.key, "-pubout", "-out", publicKey]).status == 0)

        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", pem.cert, "--certificate", der, "--public-key", publicKey])
        #expect(added.status == 0, "\(added.combined)")
        let stored = Set(try pins(cli).compactMap { $0["pinSHA256"] as? String })
        #expect(stored == [try Self.opensslPin(certificate: pem.cert), try Self.opensslPin(certificate: backup.cert), try Self.opensslPin(certificate: third.cert)])
        // The certificate hash is kept for certificate pins (legacy `fp`), not for a bare key.
        let withCertificate = try pins(cli).filter { $0["certificateSHA256"] != nil }.count
        #expect(withCertificate == 2)
    }

    @Test func pinsTheChainOfALiveServer() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "localhost"]).status == 0)
        let server = try Self.makeCertificate(in: cli.directory, name: "live")
        let port = try FreePort.pick()
        let sServer = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", server.cert, "-key", server.key, "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server")
        defer { sServer.stop() }
        #expect(FreePort.waitUntilListening(port: port))

        // Self-signed: refused unless its CA is given, and nothing is stored.
        let before = try cli.databaseDump()
        let refused = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "localhost", "--from-host", "127.0.0.1:\(port)"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("does not validate"), "\(refused.stderr)")
        #expect(try cli.databaseDump() == before)

        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "localhost", "--from-host", "localhost:\(port)", "--ca-file", server.cert])
        #expect(added.status == 0, "\(added.combined)")
        let stored = try pins(cli)
        #expect(stored.compactMap { $0["pinSHA256"] as? String } == [try Self.opensslPin(certificate: server.cert)])
        #expect((stored.first?["source"] as? String) == "live:localhost:\(port)")
    }

    /// A live host (an editor's, or one an attacker took over) presenting a mesh of certificates that sign each
    /// other is refused by their number: the server's path search, unbounded, would spend hours on them.
    @Test func aLiveServerPresentingACertificateMeshIsRefusedBeforeThePathSearch() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "localhost"]).status == 0)
        let (leaf, mesh) = try TestPKI.certificateMesh(keys: 4)
        let cert = try cli.directory.write("mesh-leaf.pem", leaf.certificatePEM + "\n")
        let key = try cli.directory.write("mesh-leaf.key", leaf.privateKeyPEM + "\n", mode: 0o600)
        let chain = try cli.directory.write("mesh.pem", try mesh.map { try $0.serializeAsPEM().pemString + "\n" }.joined())
        let root = try cli.directory.write("root.pem", try TestPKI.certificateAuthority(commonName: "Real Root").certificatePEM + "\n")
        let port = try FreePort.pick()
        let sServer = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-cert_chain", chain, "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server")
        defer { sServer.stop() }
        #expect(FreePort.waitUntilListening(port: port))

        let before = try cli.databaseDump()
        let refused = try cli.run(["pin", "add", "--skip-live-check", "--reason", "r", "acme", "localhost", "--from-host", "localhost:\(port)", "--ca-file", root])
        #expect(refused.status != 0 && refused.stderr.contains("presented 17 certificates; at most 16"), "\(refused.combined)")
        #expect(try cli.databaseDump() == before)
    }

    @Test func listingsAndAuditLog() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["customer", "add", "globex"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let table = try cli.run(["customer", "list"])
        #expect(table.stdoutText.contains("acme") && table.stdoutText.contains("globex"))
        let list = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["customer", "list", "--json"]).stdout)) as? [[String: Any]])
        #expect(list.compactMap { $0["name"] as? String }.sorted() == ["acme", "globex"])
        let log = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["log", "--json"]).stdout)) as? [[String: Any]])
        #expect(log.count == 3)
        #expect(log.allSatisfy { ($0["actor"] as? String) == "test-admin" })
        #expect(Set(log.compactMap { $0["action"] as? String }) == ["customer.add", "host.add"])
    }
}

/// Loopback ports for child processes that cannot report the port they bound, and waiting for them to listen.
enum FreePort {
    static func pick() throws -> Int { try LoopbackPort.unused() }

    static func waitUntilListening(port: Int, timeout: TimeInterval = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let fd = try? RawClient.connect(port: port) {
                close(fd)
                return true
            }
            usleep(50_000)
        }
        return false
    }
}

@Suite(.serialized) struct CLIHostCommandTests {
    @Test func listAndUpdateHosts() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let updated = try cli.run(["host", "update", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--port", "8443", "--include-subdomains", "true"])
        #expect(updated.status == 0, "\(updated.combined)")
        let list = try cli.run(["host", "list", "acme", "--json"])
        let hosts = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        #expect(hosts.first?["port"] as? Int == 8443)
        #expect(hosts.first?["includeSubdomains"] as? Bool == true)
        let before = try cli.databaseDump()
        let bad = try cli.run(["host", "update", "--skip-live-check", "--reason", "test host not served", "acme", "nope.example.com", "--port", "1"])
        #expect(bad.status != 0)
        #expect(try cli.databaseDump() == before)
    }
}
