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
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", leaf.cert, "--certificate", backup.cert]).status == 0)
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

    /// A root, an intermediate with `intermediateExtensions` besides CA:TRUE and keyCertSign, and a signer,
    /// made by openssl; returns the signer key, the signer+intermediate+root chain, the root's DER and a
    /// bundle `openssl smime -sign` made through that chain.
    static func opensslIntermediateChain(in directory: TemporaryDirectory, intermediateExtensions: String) throws
        -> (key: String, chain: String, rootDER: [UInt8], bundle: [UInt8]) {
        func run(_ arguments: [String]) throws {
            let result = try ProcessRunner.run("openssl", arguments)
            #expect(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        let rootKey = directory.file("root.key"), root = directory.file("root.pem")
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", rootKey])
        try run(["req", "-new", "-x509", "-key", rootKey, "-out", root, "-days", "3650", "-subj", "/CN=Legacy Root",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        let issuerKey = directory.file("intermediate.key"), issuerRequest = directory.file("intermediate.csr")
        let issuer = directory.file("intermediate.pem")
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", issuerKey])
        try run(["req", "-new", "-key", issuerKey, "-out", issuerRequest, "-subj", "/CN=Legacy Intermediate"])
        let issuerExtensions = try directory.write("intermediate.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n\(intermediateExtensions)\n")
        try run(["x509", "-req", "-in", issuerRequest, "-CA", root, "-CAkey", rootKey, "-CAcreateserial", "-days", "1000", "-out", issuer, "-extfile", issuerExtensions])
        let signerKey = directory.file("signer.key"), request = directory.file("signer.csr"), signer = directory.file("signer.pem")
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", signerKey])
        chmod(signerKey, 0o600)
        try run(["req", "-new", "-key", signerKey, "-out", request, "-subj", "/CN=Legacy Signer"])
        let extensions = try directory.write("signer.ext", "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection\n")
        try run(["x509", "-req", "-in", request, "-CA", issuer, "-CAkey", issuerKey, "-CAcreateserial", "-days", "825", "-out", signer, "-extfile", extensions])
        let chain = try directory.write("chain.pem", try [signer, issuer, root].map { try String(contentsOfFile: $0, encoding: .utf8) }.joined())
        let payload = try directory.write("payload.json", "{\"customer\":\"acme\",\"timestamp\":\(Int64(Date().timeIntervalSince1970)),\"hashes\":[]}")
        let bundle = directory.file("bundle.p7")
        try run(["smime", "-sign", "-binary", "-nodetach", "-outform", "DER", "-in", payload, "-signer", signer, "-inkey", signerKey,
                 "-certfile", issuer, "-out", bundle])
        let rootDER = try ProcessRunner.run("openssl", ["x509", "-in", root, "-outform", "DER"]).stdout
        return (signerKey, chain, rootDER, [UInt8](try Data(contentsOf: URL(fileURLWithPath: bundle))))
    }

    /// OpenSSL's S/MIME purpose covers the issuers too: an intermediate whose extendedKeyUsage lacks
    /// emailProtection makes legacy apps reject every bundle, so `init` refuses such a chain.
    @Test func intermediateWithoutEmailProtectionIsRefusedAsOpenSSLRefusesIt() throws {
        for (extensions, usable) in [("", true), ("extendedKeyUsage=emailProtection", true), ("extendedKeyUsage=serverAuth", false)] {
            let cli = try PinsetCLI()
            defer { cli.remove() }
            let pki = try Self.opensslIntermediateChain(in: cli.directory, intermediateExtensions: extensions)
            let legacy = try LegacyGCXClient(anchorDER: pki.rootDER, directory: cli.directory.path)
            let result = try cli.run(["init", "--import-key", pki.key, "--import-certificate", pki.chain])
            if usable {
                #expect(result.status == 0, "\(extensions): \(result.combined)")
                #expect(throws: Never.self) { try legacy.accept(bundle: pki.bundle) }
            } else {
                #expect(result.status != 0)
                #expect(result.stderr.contains("'Legacy Intermediate'") && result.stderr.contains("emailProtection"), "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/signing-key.pem"))
                #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/trust-cert.der"))
                let refusal = #expect(throws: LegacyGCXClient.Refusal.self) { try legacy.accept(bundle: pki.bundle) }
                #expect(refusal?.reason.contains("unsuitable certificate purpose") == true, "\(String(describing: refusal))")
            }
        }
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

    /// An anchor that expires within a bundle lifetime and a re-sign interval would be accepted and then never
    /// sign: refused, with the minimum, before anything is written. A short one that can sign is a warning.
    @Test func aNewAnchorShorterThanABundleLifetimeIsRefusedAndAShortOneIsAWarning() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        let refused = try cli.run(["init", "--validity-days", "1", "--json"])
        #expect(refused.status != 0 && refused.stderr.contains("at least 86700 s") && refused.stderr.contains("at least 2 days"), "\(refused.combined)")
        #expect(!FileManager.default.fileExists(atPath: cli.dataDir), "nothing is written for a refused identity")
        let result = try cli.run(["init", "--validity-days", "30", "--json"])
        #expect(result.status == 0, "\(result.combined)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        let warnings = try #require(object["warnings"] as? [String])
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("in 30 days") == true, "\(warnings)")
        let normal = try PinsetCLI()
        defer { normal.remove() }
        let long = try normal.run(["init"])
        #expect(long.status == 0 && !long.stderr.contains("warning"), "\(long.combined)")
    }
}
