import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

/// Replays the verifier and payload fuzzers' inputs through the normal test suite: the committed seed corpora and
/// every input kept in `Fuzz/regressions/` after a fix. None may trap; none is accepted as signed by a trust
/// anchor that never signed anything; an accepted payload survives `encoded()` and `decode` unchanged.
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
    }

    @Test(arguments: inputs("payload-decoder"))
    func replayPayload(_ path: String) throws {
        let input = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        guard let payload = try? BundlePayload.decode(input) else { return }
        #expect(try BundlePayload.decode(payload.encoded()) == payload)
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
        #expect(throws: ValidationError.self) { try SHA256Fingerprint(base64: "sha256/sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=") }
    }
}
