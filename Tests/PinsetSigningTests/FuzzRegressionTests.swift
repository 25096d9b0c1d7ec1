import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

/// Replays the verifier and payload fuzzers' inputs through the normal test suite: the committed seed corpora and
/// every input kept in `Fuzz/regressions/` after a fix. None may trap; none is accepted as signed by a trust
/// anchor that never signed anything; an accepted payload survives `encoded()` and `decode` unchanged (less
/// entries without pins, which are never published).
///
/// A regression's file name states the outcome it must keep: `refused-…` inputs must be refused — a signed
/// one even when its own embedded signer certificate is the trust anchor — and `accepted-…` signed inputs must
/// verify against their own embedded signer certificate.
@Suite("Fuzz regressions: bundle verification")
struct BundleFuzzRegressionTests {
    static func inputs(_ target: String) -> [String] {
        FuzzInputs.paths(for: target)
    }

    @Test(arguments: inputs("bundle-verifier"))
    func replaySignedData(_ path: String) async throws {
        let input = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let anchor = try TestPKI.certificateAuthority(commonName: "Fuzz Regression Anchor")
        let result = await SignatureVerifier.verify(input, trustAnchors: [anchor.certificate], at: Date())
        guard case .failure = result else {
            Issue.record("bytes no test key signed were accepted")
            return
        }
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard name.hasPrefix("refused-") || name.hasPrefix("accepted-") else { return }
        let ownSigner = try Self.embeddedCertificates(path)
        let trusted = await SignatureVerifier.verify(input, trustAnchors: ownSigner, at: Date())
        if name.hasPrefix("refused-") {
            #expect(trusted.failureCode != nil, "\(name) was accepted")
        } else {
            #expect((try? trusted.get()) != nil, "\(name): \(trusted)")
        }
    }

    /// The certificates a signed input carries, read by the real `openssl pkcs7`.
    static func embeddedCertificates(_ path: String) throws -> [Certificate] {
        let printed = try ProcessRunner.run("openssl", ["pkcs7", "-inform", "der", "-in", path, "-print_certs"])
        try #require(printed.status == 0, "openssl pkcs7: \(printed.stderr)")
        return try PinMaterial.certificates(fromFileContents: printed.stdout, origin: path)
    }

    @Test(arguments: inputs("payload-decoder"))
    func replayPayload(_ path: String) throws {
        let input = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        if URL(fileURLWithPath: path).lastPathComponent.hasPrefix("refused-") {
            #expect(throws: PayloadError.self) { try BundlePayload.decode(input) }
            return
        }
        guard let payload = try? BundlePayload.decode(input) else { return }
        let published = try BundlePayload.decode(payload.encoded())
        #expect(published.hosts == payload.publishedHosts)
        #expect(published.hosts.allSatisfy { $0.hasPins })
        var expected = payload
        expected.hosts = payload.publishedHosts
        #expect(published == expected)
    }

    /// `sha256/` is valid base64, so a digest's own base64 may begin with it. The optional HPKP prefix must not
    /// be stripped from such a digest, or `pin add --hash 'sha256/sha256/…'` stores a digest whose `base64` the
    /// server signs and every client refuses.
    @Test func digestsThatBeginWithTheHPKPPrefix() throws {
        let digest = "sha256/eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
        let parsed = try SHA256Fingerprint(base64: digest)
        #expect(parsed.base64 == digest)
        #expect(try SHA256Fingerprint(base64: parsed.base64) == parsed)
        #expect(try SHA256Fingerprint(base64: "sha256/" + digest) == parsed)
        #expect(throws: InputError.self) { try SHA256Fingerprint(base64: "sha256/sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=") }
    }
}
