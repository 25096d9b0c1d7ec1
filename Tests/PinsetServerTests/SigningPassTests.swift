import Foundation
import PinsetCore
import PinsetServer
import PinsetSigning
import PinsetTestSupport
import Testing

struct SigningPassTests {
    static func pinSets(_ count: Int, version: Int64 = 1) throws -> [PinSet] {
        let key = try PinMaterial.pin(for: try TestPKI.signingIdentity().certificate.publicKey, source: PinSource(kind: .publicKey))
        return try (0..<count).map { i in
            let pins = [key] + (0..<2).map { p in
                Pin(spkiSHA256: SHA256Fingerprint(of: Array("\(i)-\(p)".utf8)), source: PinSource(kind: .hash))
            }
            return PinSet(customer: try CustomerName("c\(i)"), version: version, hosts: [
                HostPins(hostname: try Hostname("b\(i).example.com"), pins: pins),
                HostPins(hostname: try Hostname("a\(i).example.com"), port: 8443, includeSubdomains: true, pins: pins),
            ])
        }
    }

    /// The cached path must sign exactly the payload `BundlePayload.encoded()` produces.
    @Test func cachedEncodingSignsTheCanonicalPayload() async throws {
        let identity = try TestPKI.signingIdentity()
        let cache = EncodedHostsCache()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600, hostsCache: cache)
        let sets = try Self.pinSets(20)
        // Whole seconds, inside the test certificate's validity: every pass checks it.
        let seconds = Int64(Date().timeIntervalSince1970)
        let now = Date(timeIntervalSince1970: TimeInterval(seconds))
        _ = pass.run(sets, now: now.addingTimeInterval(-300))
        let bundles = pass.run(sets, now: now).bundles
        for (pinSet, bundle) in zip(sets, bundles) {
            let content = try await SignatureVerifier.verify(bundle.bytes, trustAnchors: [identity.certificate], at: Date()).get().content
            let expected = BundlePayload(pinSet: pinSet, timestamp: seconds, expires: seconds + 3600).encoded()
            #expect(content == expected)
        }
    }

    @Test func aNewVersionIsReEncodedAndRemovedCustomersAreDropped() async throws {
        let identity = try TestPKI.signingIdentity()
        let cache = EncodedHostsCache()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600, hostsCache: cache)
        _ = pass.run(try Self.pinSets(5), now: Date())
        var changed = try Self.pinSets(3, version: 2)
        changed[0].hosts.removeLast()
        let bundles = pass.run(changed, now: Date()).bundles
        #expect(cache.count == 3)
        let content = try await SignatureVerifier.verify(bundles[0].bytes, trustAnchors: [identity.certificate], at: Date()).get().content
        #expect(try BundlePayload.decode(content).hosts.count == 1)
    }
}
