import Foundation
import PinsetTestSupport
import Testing

/// `pinset init` with an imported signer chain: the anchor it prints and writes is the one a legacy app can
/// verify bundles with, and every certificate of the chain is checked.
@Suite(.serialized) struct LegacyClientAnchorTests {
    /// A root CA and a signer it issues (digitalSignature, emailProtection), made by openssl; returns the paths
    /// of the signer key (mode 0600), the signer+root chain, the signer alone and the root's DER.
    static func opensslChain(in directory: TemporaryDirectory) throws -> (key: String, chain: String, signerOnly: String, rootDER: [UInt8], signerDER: [UInt8]) {
        func run(_ arguments: [String]) throws {
            let result = try ProcessRunner.run("openssl", arguments)
            #expect(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        let rootKey = directory.file("root.key"), root = directory.file("root.pem")
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", rootKey])
        try run(["req", "-new", "-x509", "-key", rootKey, "-out", root, "-days", "3650", "-subj", "/CN=Legacy Root",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"])
        let signerKey = directory.file("signer.key"), request = directory.file("signer.csr"), signer = directory.file("signer.pem")
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", signerKey])
        chmod(signerKey, 0o600)
        try run(["req", "-new", "-key", signerKey, "-out", request, "-subj", "/CN=Legacy Signer"])
        let extensions = try directory.write("signer.ext", "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection\n")
        try run(["x509", "-req", "-in", request, "-CA", root, "-CAkey", rootKey, "-CAcreateserial", "-days", "825", "-out", signer, "-extfile", extensions])
        let chain = try directory.write("chain.pem", try String(contentsOfFile: signer, encoding: .utf8) + (try String(contentsOfFile: root, encoding: .utf8)))
        let rootDER = try ProcessRunner.run("openssl", ["x509", "-in", root, "-outform", "DER"]).stdout
        let signerDER = try ProcessRunner.run("openssl", ["x509", "-in", signer, "-outform", "DER"]).stdout
        return (signerKey, chain, signer, rootDER, signerDER)
    }

    @Test func importedChainPrintsAndWritesTheRootThatVerifiesBundles() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        let pki = try Self.opensslChain(in: cli.directory)
        let initialized = try cli.run(["init", "--import-key", pki.key, "--import-certificate", pki.chain])
        #expect(initialized.status == 0, "\(initialized.combined)")
        let printed = initialized.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        #expect(printed == Data(pki.rootDER).base64EncodedString(), "\(initialized.stdoutText)")
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/trust-cert.der")))
        #expect(written == pki.rootDER)

        let leaf = try LegacyClientPinTests.certificate("leaf", in: cli.directory)
        let backup = try LegacyClientPinTests.certificate("backup", in: cli.directory)
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--force", "--reason", "test host not served", "acme", "api.example.com", "--certificate", leaf.cert, "--certificate", backup.cert]).status == 0)
        let bundle = try LegacyClientPinTests.signedBundle(cli, customer: "acme")

        // The printed anchor verifies with OpenSSL's PKCS7_verify; the signer certificate, as printed before,
        // does not.
        let legacy = try LegacyGCXClient(anchorDER: written, directory: cli.directory.path)
        let payload = try legacy.accept(bundle: bundle)
        #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [leaf.der], payload: payload))
        let wrongScratch = try TemporaryDirectory(prefix: "pinset-legacy")
        defer { wrongScratch.remove() }
        let signerAsAnchor = try LegacyGCXClient(anchorDER: pki.signerDER, directory: wrongScratch.path)
        #expect(throws: LegacyGCXClient.Refusal.self) { try signerAsAnchor.accept(bundle: bundle) }
    }

    @Test func chainWithoutItsRootIsRefused() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        let pki = try Self.opensslChain(in: cli.directory)
        let refused = try cli.run(["init", "--import-key", pki.key, "--import-certificate", pki.signerOnly])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("append the root certificate"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/signing-key.pem"))
    }

    /// An anchor that expired yesterday, or is not valid yet, is refused; one that expires soon is a warning.
    @Test func validityOfEveryChainCertificateIsChecked() throws {
        let day: TimeInterval = 86_400
        let cases: [(notBefore: Date, notAfter: Date, refused: Bool)] = [
            (Date().addingTimeInterval(-400 * day), Date().addingTimeInterval(-day), true),
            (Date().addingTimeInterval(day), Date().addingTimeInterval(400 * day), true),
            (Date().addingTimeInterval(-day), Date().addingTimeInterval(30 * day), false),
        ]
        for expectation in cases {
            let cli = try PinsetCLI()
            defer { cli.remove() }
            let root = try TestPKI.certificateAuthority(commonName: "Dated Root", notBefore: expectation.notBefore, notAfter: expectation.notAfter)
            let signer = try TestPKI.leaf(commonName: "Signer", issuer: root)
            let key = try cli.directory.write("signer.key", signer.privateKeyPEM, mode: 0o600)
            let chain = try cli.directory.write("chain.pem", signer.certificatePEM + "\n" + root.certificatePEM + "\n")
            let result = try cli.run(["init", "--import-key", key, "--import-certificate", chain])
            if expectation.refused {
                #expect(result.status != 0)
                #expect(result.stderr.contains("'Dated Root'"), "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/signing-key.pem"))
            } else {
                #expect(result.status == 0, "\(result.combined)")
                #expect(result.stderr.contains("warning: The chain certificate 'Dated Root' expires"), "\(result.stderr)")
                let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/trust-cert.der")))
                #expect(written == root.certificateDER)
            }
        }
    }

    @Test func shortValidityOfANewAnchorIsAWarning() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        let result = try cli.run(["init", "--validity-days", "1", "--json"])
        #expect(result.status == 0, "\(result.combined)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        let warnings = try #require(object["warnings"] as? [String])
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("in 1 day") == true, "\(warnings)")
        let normal = try PinsetCLI()
        defer { normal.remove() }
        let long = try normal.run(["init"])
        #expect(long.status == 0 && !long.stderr.contains("warning"), "\(long.combined)")
    }
}
