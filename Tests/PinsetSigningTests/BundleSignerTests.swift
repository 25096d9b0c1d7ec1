import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

struct BundleSignerTests {
    static func payload(customer: String = "acme") throws -> BundlePayload {
        let now = Int64(Date().timeIntervalSince1970)
        return BundlePayload(customer: try CustomerName(customer), timestamp: now, expires: now + 3600, version: 1, hosts: [])
    }

    /// OpenSSL is what legacy clients verify with: every key type must pass both `smime` and `cms`.
    @Test(arguments: [SigningKeyType.p256, .p384, .rsa(bits: 2048)])
    func opensslVerifiesSignedBundles(keyType: SigningKeyType) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = try TestPKI.signingIdentity(keyType)
        let payload = try Self.payload()
        let signed = try BundleSigner(identity: identity).sign(payload)
        let bundlePath = try directory.write("acme.json.signed", signed)
        let trustPath = try directory.write("trust.pem", identity.certificatePEM)
        for tool in ["smime", "cms"] {
            let result = try ProcessRunner.run("openssl", [tool, "-verify", "-inform", "der", "-in", bundlePath, "-CAfile", trustPath])
            #expect(result.status == 0, "openssl \(tool) -verify failed: \(result.stderr)")
            #expect(result.stdout == payload.encoded())
        }
    }

    @Test func opensslRejectsABundleFromAnotherSigner() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let signed = try BundleSigner(identity: try TestPKI.signingIdentity()).sign(try Self.payload())
        let bundlePath = try directory.write("b.signed", signed)
        let trustPath = try directory.write("trust.pem", try TestPKI.signingIdentity().certificatePEM)
        let result = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", bundlePath, "-CAfile", trustPath])
        #expect(result.status != 0)
    }

    @Test func verifierAcceptsItsOwnBundles() async throws {
        let identity = try TestPKI.signingIdentity()
        let payload = try Self.payload()
        let signed = try BundleSigner(identity: identity).sign(payload)
        let verified = try await SignatureVerifier.verify(signed, trustAnchors: [identity.certificate], at: Date()).get()
        #expect(verified.content == payload.encoded())
        #expect(verified.signer == identity.certificate)
    }

    @Test func verifierAcceptsASignerIssuedByTheAnchor() async throws {
        let ca = try TestPKI.certificateAuthority()
        let signerLeaf = try TestPKI.leaf(commonName: "signer", issuer: ca)
        let identity = try SigningIdentity(privateKey: signerLeaf.privateKey, certificate: signerLeaf.certificate, intermediates: [])
        let signed = try BundleSigner(identity: identity).sign(content: Array("{}".utf8))
        let result = await SignatureVerifier.verify(signed, trustAnchors: [ca.certificate], at: Date())
        #expect((try? result.get()) != nil)
    }

    @Test func verifierRejectsTamperingAndStrangers() async throws {
        let identity = try TestPKI.signingIdentity()
        let signed = try BundleSigner(identity: identity).sign(try Self.payload())
        // Flip a byte of the JSON content inside the envelope.
        let marker = Array("\"customer\"".utf8)
        let index = try #require(signed.firstRange(of: marker)?.lowerBound)
        var tampered = signed
        tampered[index + 2] ^= 0x01
        let tamperedResult = await SignatureVerifier.verify(tampered, trustAnchors: [identity.certificate], at: Date())
        #expect(tamperedResult.failureCode == .invalidSignature)

        let stranger = try TestPKI.signingIdentity()
        let strangerResult = await SignatureVerifier.verify(signed, trustAnchors: [stranger.certificate], at: Date())
        #expect(strangerResult.failureCode == .untrustedSigner)

        let truncated = await SignatureVerifier.verify(Array(signed.prefix(signed.count / 2)), trustAnchors: [identity.certificate], at: Date())
        #expect(truncated.failureCode == .malformedSignedData)

        let later = await SignatureVerifier.verify(signed, trustAnchors: [identity.certificate], at: identity.certificate.notValidAfter.addingTimeInterval(86_400))
        #expect(later.failureCode == .untrustedSigner)
    }

    @Test func verifierRejectsSHA1() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = try TestPKI.signingIdentity()
        let content = try directory.write("payload.json", "{}")
        let cert = try directory.write("cert.pem", identity.certificatePEM)
        let key = try directory.write("key.pem", try identity.privateKey.serializeAsPEM().pemString, mode: 0o600)
        let signedPath = directory.file("sha1.der")
        let result = try ProcessRunner.run("openssl", [
            "cms", "-sign", "-md", "sha1", "-binary", "-nodetach", "-outform", "der", "-noattr",
            "-in", content, "-signer", cert, "-inkey", key, "-out", signedPath,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let signed = try AtomicFileBytes.read(signedPath)
        let verdict = await SignatureVerifier.verify(signed, trustAnchors: [identity.certificate], at: Date())
        #expect(verdict.failureCode == .weakDigestAlgorithm)
    }

    @Test func signerCertificateMustAllowSigning() throws {
        let ca = try TestPKI.certificateAuthority()
        let extensions = try Certificate.Extensions {
            Critical(KeyUsage(keyEncipherment: true))
        }
        let leaf = try TestPKI.leaf(commonName: "no-signing", issuer: ca, extensions: extensions)
        #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(privateKey: leaf.privateKey, certificate: leaf.certificate)
        }
    }

    @Test func keyMustMatchCertificate() throws {
        let a = try TestPKI.signingIdentity()
        let b = try TestPKI.signingIdentity()
        #expect(throws: SigningIdentityError.self) {
            try SigningIdentity(privateKey: a.privateKey, certificate: b.certificate)
        }
    }
}

enum AtomicFileBytes {
    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

extension Result where Failure == SignatureVerificationError {
    var failureCode: SignatureVerificationError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}

/// Trust certificates of existing deployments are often self-signed without CA:TRUE; OpenSSL trusts them
/// directly as signers, so Pinset's verifier must too.
struct LegacyAnchorTests {
    @Test func verifierTrustsASelfSignedNonCAAnchorDirectly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = directory.file("key.pem"), cert = directory.file("cert.pem")
        #expect(try ProcessRunner.run("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key]).status == 0)
        chmod(key, 0o600)
        let made = try ProcessRunner.run("openssl", [
            "req", "-new", "-x509", "-key", key, "-out", cert, "-days", "30", "-subj", "/CN=Legacy",
            "-addext", "basicConstraints=critical,CA:FALSE",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let identity = try SigningIdentity.load(keyPath: key, certificatePath: cert)
        let signed = try BundleSigner(identity: identity).sign(content: Array("{}".utf8))
        let result = await SignatureVerifier.verify(signed, trustAnchors: [identity.certificate], at: Date())
        #expect((try? result.get()) != nil, "\(result)")
        let expired = await SignatureVerifier.verify(signed, trustAnchors: [identity.certificate], at: Date().addingTimeInterval(86_400 * 40))
        #expect(expired.failureCode == .untrustedSigner)
    }
}
