import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

/// Bundles made by the real `openssl` (as legacy signing scripts make them) and signer certificates with the
/// usage extensions OpenSSL's S/MIME purpose looks at: Pinset's verifier must decide as OpenSSL does.
struct SignatureVerifierTests {
    static let payload = Array(#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2}"#.utf8)

    /// A key and self-signed certificate made by `openssl req`, and bundles signed with them.
    struct OpenSSLSigner {
        let directory: TemporaryDirectory
        let key: String
        let certificate: String

        init(_ keyOptions: [String] = ["-newkey", "rsa:2048"], extensions: [String] = []) throws {
            directory = try TemporaryDirectory(prefix: "pinset-openssl")
            key = directory.file("key.pem")
            certificate = directory.file("cert.pem")
            let made = try ProcessRunner.run("openssl", ["req", "-x509", "-nodes"] + keyOptions + [
                "-keyout", key, "-out", certificate, "-days", "30", "-subj", "/CN=Legacy Trust Server",
            ] + extensions.flatMap { ["-addext", $0] })
            guard made.status == 0 else { throw CLIFailure(message: "openssl req: \(made.stderr)") }
        }

        /// `openssl <tool> -sign -nodetach -binary -outform der -md <digest>`, as signer.py runs it.
        func sign(_ content: [UInt8], tool: String = "smime", digest: String = "sha256", signer: String? = nil, key: String? = nil) throws -> [UInt8] {
            let input = try directory.write("payload.json", content)
            let output = directory.file("bundle-\(tool)-\(digest).der")
            let result = try ProcessRunner.run("openssl", [
                tool, "-sign", "-nodetach", "-binary", "-outform", "der", "-md", digest,
                "-signer", signer ?? certificate, "-inkey", key ?? self.key, "-in", input, "-out", output,
            ])
            guard result.status == 0 else { throw CLIFailure(message: "openssl \(tool) -sign: \(result.stderr)") }
            return try AtomicFileBytes.read(output)
        }

        /// Whether `openssl smime -verify` and `openssl cms -verify` both accept `bundle` against `anchor`.
        func opensslAccepts(_ bundle: [UInt8], anchor: String? = nil) throws -> Bool {
            let path = try directory.write("verify.der", bundle)
            var verdicts: [Bool] = []
            for tool in ["smime", "cms"] {
                let result = try ProcessRunner.run("openssl", [tool, "-verify", "-inform", "der", "-in", path, "-CAfile", anchor ?? certificate, "-out", "/dev/null"])
                verdicts.append(result.status == 0)
            }
            #expect(verdicts[0] == verdicts[1], "openssl smime and cms disagree")
            return verdicts[0]
        }

        func anchor(_ path: String? = nil) throws -> [Certificate] {
            try PinMaterial.certificates(fromFileContents: try AtomicFileBytes.read(path ?? certificate), origin: path ?? certificate)
        }

        /// A P-256 signer certificate issued by this one with `openssl x509 -req`, with the extensions of the
        /// `.ext` file text `extensions`; returns the certificate's and the key's paths.
        func issueSigner(_ name: String, commonName: String, extensions: String) throws -> (certificate: String, key: String) {
            let leafKey = directory.file("\(name)-key.pem")
            let leafRequest = directory.file("\(name).csr")
            let leafCertificate = directory.file("\(name).pem")
            let extensionFile = try directory.write("\(name).ext", extensions)
            let requested = try ProcessRunner.run("openssl", [
                "req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", leafKey, "-out", leafRequest, "-subj", "/CN=\(commonName)",
            ])
            guard requested.status == 0 else { throw CLIFailure(message: "openssl req -new: \(requested.stderr)") }
            let issued = try ProcessRunner.run("openssl", [
                "x509", "-req", "-in", leafRequest, "-CA", certificate, "-CAkey", key, "-CAcreateserial",
                "-out", leafCertificate, "-days", "10", "-extfile", extensionFile,
            ])
            guard issued.status == 0 else { throw CLIFailure(message: "openssl x509 -req: \(issued.stderr)") }
            return (leafCertificate, leafKey)
        }
    }

    struct CLIFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    @Test(arguments: [("smime", "sha256"), ("cms", "sha256"), ("smime", "sha384"), ("cms", "sha512")])
    func acceptsOpenSSLSignedRSABundles(tool: String, digest: String) async throws {
        let signer = try OpenSSLSigner()
        defer { signer.directory.remove() }
        let bundle = try signer.sign(Self.payload, tool: tool, digest: digest)
        #expect(try signer.opensslAccepts(bundle))
        let result = await SignatureVerifier.verify(bundle, trustAnchors: try signer.anchor(), at: Date())
        #expect((try? result.get())?.content == Self.payload, "\(result)")
    }

    /// `openssl smime` writes SHA-256 with NULL parameters also for ECDSA signers.
    @Test(arguments: ["smime", "cms"])
    func acceptsOpenSSLSignedECDSABundles(tool: String) async throws {
        let signer = try OpenSSLSigner(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
        defer { signer.directory.remove() }
        let bundle = try signer.sign(Self.payload, tool: tool)
        #expect(try signer.opensslAccepts(bundle))
        let result = await SignatureVerifier.verify(bundle, trustAnchors: try signer.anchor(), at: Date())
        #expect((try? result.get())?.content == Self.payload, "\(result)")
    }

    @Test(arguments: ["smime", "cms"])
    func refusesOpenSSLSignedSHA1Bundles(tool: String) async throws {
        let signer = try OpenSSLSigner()
        defer { signer.directory.remove() }
        let bundle = try signer.sign(Self.payload, tool: tool, digest: "sha1")
        let result = await SignatureVerifier.verify(bundle, trustAnchors: try signer.anchor(), at: Date())
        #expect(result.failureCode == .weakDigestAlgorithm)
    }

    @Test func refusesTamperedOpenSSLSignedBundles() async throws {
        let signer = try OpenSSLSigner()
        defer { signer.directory.remove() }
        let bundle = try signer.sign(Self.payload)
        let anchors = try signer.anchor()

        // A changed content byte.
        var content = bundle
        let marker = Array(#""acme""#.utf8)
        let start = try #require(content.indices.first { content[$0...].starts(with: marker) })
        content[start + 1] = UInt8(ascii: "b")
        #expect(await SignatureVerifier.verify(content, trustAnchors: anchors, at: Date()).failureCode != nil)
        #expect(try !signer.opensslAccepts(content))

        // The digest identifiers changed to SHA-512: the respelt sha512WithRSAEncryption does not match the
        // SHA-256 DigestInfo inside the signature.
        let sha256: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
        var relabelled = bundle
        var index = relabelled.startIndex
        var replaced = 0
        while index + sha256.count <= relabelled.endIndex {
            if relabelled[index..<(index + sha256.count)].elementsEqual(sha256) {
                relabelled[index + sha256.count - 1] = 0x03
                replaced += 1
            }
            index += 1
        }
        #expect(replaced >= 2)
        #expect(await SignatureVerifier.verify(relabelled, trustAnchors: anchors, at: Date()).failureCode != nil)

        // Another signer's bundle.
        let stranger = try OpenSSLSigner()
        defer { stranger.directory.remove() }
        let foreign = try stranger.sign(Self.payload)
        #expect(await SignatureVerifier.verify(foreign, trustAnchors: anchors, at: Date()).failureCode == .untrustedSigner)
    }

    /// OpenSSL's S/MIME signing purpose: keyUsage digitalSignature OR nonRepudiation; extendedKeyUsage with
    /// emailProtection (anyExtendedKeyUsage is not enough); Netscape type with S/MIME or SSL client.
    @Test(arguments: [
        ("keyUsage=nonRepudiation", true),
        ("keyUsage=critical,nonRepudiation", true),
        ("keyUsage=digitalSignature", true),
        ("keyUsage=keyCertSign", false),
        ("keyUsage=keyAgreement", false),
        ("extendedKeyUsage=emailProtection", true),
        ("extendedKeyUsage=serverAuth", false),
        ("extendedKeyUsage=anyExtendedKeyUsage", false),
        ("nsCertType=email", true),
        ("nsCertType=client", true),
        ("nsCertType=server", false),
    ])
    func signerUsageAgreesWithOpenSSL(extensionLine: String, accepted: Bool) async throws {
        let signer = try OpenSSLSigner(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], extensions: [extensionLine])
        defer { signer.directory.remove() }
        let bundle = try signer.sign(Self.payload, tool: "cms")
        #expect(try signer.opensslAccepts(bundle) == accepted, "openssl's verdict on \(extensionLine)")
        let result = await SignatureVerifier.verify(bundle, trustAnchors: try signer.anchor(), at: Date())
        if accepted {
            #expect((try? result.get()) != nil, "\(extensionLine): \(result)")
        } else {
            #expect(result.failureCode == .signerUsageNotAllowed, "\(extensionLine): \(result)")
        }
    }

    /// OpenSSL applies the extendedKeyUsage rule to every certificate of the chain, the anchor included.
    @Test(arguments: [(nil, true), ("serverAuth", false), ("emailProtection", true)] as [(String?, Bool)])
    func issuerExtendedKeyUsageAgreesWithOpenSSL(issuerUsage: String?, accepted: Bool) async throws {
        let ca = try OpenSSLSigner(
            ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
            extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,digitalSignature"]
                + (issuerUsage.map { ["extendedKeyUsage=\($0)"] } ?? [])
        )
        defer { ca.directory.remove() }
        let leaf = try ca.issueSigner("leaf", commonName: "Signer", extensions: "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection\n")
        let bundle = try ca.sign(Self.payload, tool: "cms", signer: leaf.certificate, key: leaf.key)
        #expect(try ca.opensslAccepts(bundle) == accepted)
        let result = await SignatureVerifier.verify(bundle, trustAnchors: try ca.anchor(), at: Date())
        if accepted {
            #expect((try? result.get()) != nil, "\(result)")
        } else {
            #expect(result.failureCode == .signerUsageNotAllowed, "\(result)")
        }
    }

    /// Stricter than OpenSSL: a signer issued under the anchor must not be a CA, while the anchor itself — as
    /// `openssl req -x509` makes it, CA:TRUE — still signs directly, as legacy deployments do.
    @Test func aCASignerUnderTheAnchorIsRefusedButTheAnchorItselfSigns() async throws {
        let ca = try OpenSSLSigner(
            ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
            extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,digitalSignature"]
        )
        defer { ca.directory.remove() }
        let direct = try ca.sign(Self.payload, tool: "cms")
        #expect((try? await SignatureVerifier.verify(direct, trustAnchors: try ca.anchor(), at: Date()).get()) != nil)

        let caLeaf = try ca.issueSigner("ca-leaf", commonName: "CA Signer", extensions: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,digitalSignature,keyCertSign\nextendedKeyUsage=emailProtection\n")
        let bundle = try ca.sign(Self.payload, tool: "cms", signer: caLeaf.certificate, key: caLeaf.key)
        #expect(try ca.opensslAccepts(bundle), "OpenSSL itself accepts a CA signer")
        let result = await SignatureVerifier.verify(bundle, trustAnchors: try ca.anchor(), at: Date())
        #expect(result.failureCode == .signerIsCertificateAuthority, "\(result)")
    }

    /// Whoever can write the response's bytes (no key needed) signs with a leaf under a mesh of certificates that
    /// sign each other: refused by count before any path is searched, where an unbounded search would run for hours.
    /// Up to the bound, the search runs and ends with the signer untrusted.
    @Test func aBundleCarryingACertificateMeshIsRefusedBeforeThePathSearch() async throws {
        let anchor = try TestPKI.certificateAuthority(commonName: "The Real Trust Anchor")
        for (keys, expected) in [(4, SignatureVerificationError.Code.malformedSignedData), (3, .untrustedSigner)] {
            let (leaf, mesh) = try TestPKI.certificateMesh(keys: keys)
            let identity = try SigningIdentity(privateKey: leaf.privateKey, certificate: leaf.certificate, intermediates: mesh)
            let bundle = try BundleSigner(identity: identity).sign(content: Self.payload)
            let result = await SignatureVerifier.verify(bundle, trustAnchors: [anchor.certificate], at: Date())
            #expect(result.failureCode == expected, "\(keys * keys + 1) certificates: \(result)")
        }
        let (leaf, mesh) = try TestPKI.certificateMesh(keys: 4)
        let bundle = try BundleSigner(identity: try SigningIdentity(privateKey: leaf.privateKey, certificate: leaf.certificate, intermediates: mesh)).sign(content: Self.payload)
        if case .failure(let error) = await SignatureVerifier.verify(bundle, trustAnchors: [anchor.certificate], at: Date()) {
            #expect(error.reason.contains("17 certificates embedded; at most 10"), "\(error)")
        }
    }
}
