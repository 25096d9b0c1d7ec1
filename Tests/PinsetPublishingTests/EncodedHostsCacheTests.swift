import Foundation
import PinsetCore
import PinsetPublishing
import PinsetSigning
import PinsetTestSupport
import Testing

/// What a signing pass publishes for hosts that have no pins yet.
struct EncodedHostsCacheTests {
    /// `example.com` pins its key with include-subdomains; `login.example.com` was added and has no pins yet.
    private static func pinSet() throws -> PinSet {
        let pins = (0..<2).map { Pin(spkiSHA256: SHA256Fingerprint(of: Array("key-\($0)".utf8)), source: PinSource(kind: .hash)) }
        return PinSet(customer: try CustomerName("acme"), version: 3, hosts: [
            HostPins(hostname: try Hostname("example.com"), includeSubdomains: true, pins: pins),
            HostPins(hostname: try Hostname("login.example.com"), pins: []),
        ])
    }

    /// Published, the pinless entry would shadow the parent's pins: clients that read it as "not pinned" accept
    /// any certificate for login.example.com. Left out, the parent covers it.
    @Test(arguments: [true, false])
    func aHostWithoutPinsIsNotPublished(cached: Bool) async throws {
        let identity = try TestPKI.signingIdentity()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600, hostsCache: cached ? EncodedHostsCache() : nil)
        let pinSet = try Self.pinSet()
        for _ in 0..<2 {
            let bundle = try #require(pass.run([pinSet], now: Date()).bundles.first)
            let content = try await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [identity.certificate], at: Date()).get().content
            let payload = try BundlePayload.decode(content)
            #expect(payload.hosts.map { $0.hostname } == [try Hostname("example.com")])
            #expect(!String(decoding: content, as: UTF8.self).contains("login.example.com"))
        }
    }
}
