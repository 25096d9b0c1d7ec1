#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// A signer key and certificate replaced by hand with ones no app trusts (the anchor the apps embed,
/// `trust-cert.der`, left as it was) kept signing, and `/readyz` said ready, while every client refused the
/// bundles. Through the real binary and `pinset serve`.
@Suite(.serialized) struct SwappedSignerChainTests {
    /// Copies another identity's key and certificate chain over `directory`'s, as an edit by hand would; the
    /// files keep their modes.
    func swap(into directory: String, from donor: String) throws {
        for name in ["signing-key.pem", "trust-cert.pem"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(donor)/\(name)"))
            try bytes.write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
        }
    }

    func status(_ server: RunningServer, _ cli: PinsetCLI) throws -> [String: Any] {
        let response = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func aSignerNotIssuedByTheEmbeddedAnchorDoesNotSignAndSaysWhy() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let donor = try PinsetCLI.initialized()
        defer { donor.remove() }
        #expect(try cli.run(["customer", "add", "own", "--key-type", "p256"]).status == 0)
        #expect(try cli.run(["customer", "add", "plain"]).status == 0)
        #expect(try donor.run(["customer", "add", "donor", "--key-type", "p256"]).status == 0)
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)

        // A customer's own signer swapped: that customer alone is not signed, with the reason.
        try swap(into: "\(cli.dataDir)/customers/own", from: "\(donor.dataDir)/customers/donor")
        #expect(try cli.run(["host", "add", "own", "api.example.com"]).status == 0)
        var reason: String?
        for _ in 0..<100 where reason == nil {
            let failures = try status(server, cli)["customersNotSigned"] as? [[String: Any]] ?? []
            reason = failures.first { $0["customer"] as? String == "own" }?["reason"] as? String
            if reason == nil { usleep(100_000) }
        }
        let ownReason = try #require(reason, "the swapped customer is listed as not signed")
        #expect(ownReason.contains("customers/own/trust-cert.der") && ownReason.contains("trust anchor"), "\(ownReason)")
        #expect(try status(server, cli)["ready"] as? Bool == true, "the default identity is fine")

        // The default signer swapped: readiness fails with the reason, and the log says it.
        let original = cli.directory.file("original-trust-cert.pem")
        try FileManager.default.copyItem(atPath: cli.trustCertificate, toPath: original)
        try swap(into: cli.dataDir, from: donor.dataDir)
        #expect(try cli.run(["host", "add", "plain", "api.example.com"]).status == 0)
        var readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        for _ in 0..<100 where readiness.status == 200 {
            usleep(100_000)
            readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
        }
        #expect(readiness.status == 503)
        let body = String(decoding: readiness.body, as: UTF8.self)
        #expect(body.contains("\(cli.dataDir)/trust-cert.der") && body.contains("trust anchor"), "\(body)")
        #expect(server.process.stdout.contains("\(cli.dataDir)/trust-cert.der") || server.process.stderr.contains("\(cli.dataDir)/trust-cert.der"))
        // What is served is the last bundle signed by the real signer, never one from the swapped key.
        let plain = try CurlResponse.get("\(server.baseURL)/plain.json.signed", in: cli.directory)
        #expect(plain.status == 200)
        let bundle = try cli.directory.write("plain.json.signed", plain.body)
        #expect(try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", original]).status == 0)
        #expect(try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundle, "-CAfile", donor.trustCertificate]).status != 0)
        #expect(server.stop() == 0)
    }
}
