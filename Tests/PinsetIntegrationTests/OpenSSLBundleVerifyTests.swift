import Foundation
import PinsetTestSupport
import Testing

/// Bundles that legacy signing scripts make with `openssl smime -sign` (RSA, `rsaEncryption` in the
/// SignerInfo): `pinset verify` must check them as OpenSSL does.
struct OpenSSLBundleVerifyTests {
    @Test func verifyAcceptsOpenSSLSignedRSABundlesAndRefusesSHA1AndTampering() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        let directory = cli.directory
        let key = directory.file("legacy.key"), cert = directory.file("legacy.pem")
        let made = try ProcessRunner.run("openssl", [
            "req", "-x509", "-nodes", "-newkey", "rsa:2048", "-keyout", key, "-out", cert, "-days", "30", "-subj", "/CN=Legacy Trust Server",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let now = Int64(Date().timeIntervalSince1970)
        let payload = #"{"customer":"acme","timestamp":\#(now),"hashes":[{"hostname":"api.example.com","port":"443","fp":[],"pk":[],"pin-sha256":["r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="],"include-subdomains":false}],"format":1,"version":1,"expires":\#(now + 3600)}"#
        let input = try directory.write("payload.json", payload)

        func sign(_ tool: String, _ digest: String) throws -> String {
            let output = directory.file("\(tool)-\(digest).der")
            let result = try ProcessRunner.run("openssl", [
                tool, "-sign", "-nodetach", "-binary", "-outform", "der", "-md", digest, "-signer", cert, "-inkey", key, "-in", input, "-out", output,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            return output
        }

        for tool in ["smime", "cms"] {
            let verified = try cli.run(["verify", try sign(tool, "sha256"), "--trust", cert, "--customer", "acme"])
            #expect(verified.status == 0, "\(tool): \(verified.combined)")
            #expect(verified.stdoutText.contains("api.example.com"))
        }
        let sha1 = try cli.run(["verify", try sign("smime", "sha1"), "--trust", cert, "--customer", "acme"])
        #expect(sha1.status != 0)
        #expect(sha1.combined.contains("weakDigestAlgorithm"), "\(sha1.combined)")

        // signer.py's own payload: the signature is valid, the payload lacks Pinset's keys.
        let legacyInput = try directory.write("legacy.json", #"{"customer":"acme","timestamp":\#(now),"hashes":[]}"#)
        let legacyBundle = directory.file("legacy.der")
        #expect(try ProcessRunner.run("openssl", [
            "smime", "-sign", "-nodetach", "-binary", "-outform", "der", "-md", "sha256", "-signer", cert, "-inkey", key, "-in", legacyInput, "-out", legacyBundle,
        ]).status == 0)
        for customer in [["--customer", "acme"], []] {
            let legacy = try cli.run(["verify", legacyBundle, "--trust", cert] + customer)
            #expect(legacy.status != 0)
            #expect(legacy.combined.contains("the signature is valid and the signer trusted"), "\(legacy.combined)")
            #expect(legacy.combined.contains("format"), "\(legacy.combined)")
        }

        var tampered = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try sign("smime", "sha256"))))
        let marker = Array("api.example.com".utf8)
        let start = try #require(tampered.indices.first { tampered[$0...].starts(with: marker) })
        tampered[start] = UInt8(ascii: "x")
        let tamperedPath = try directory.write("tampered.der", tampered)
        let refused = try cli.run(["verify", tamperedPath, "--trust", cert, "--customer", "acme"])
        #expect(refused.status != 0, "\(refused.combined)")
    }
}
