import Foundation
import PinsetCore
import PinsetPublishing
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
            let content = try await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [identity.certificate], at: Date()).get().content
            let expected = BundlePayload(pinSet: pinSet, timestamp: seconds, expires: seconds + 3600).encoded()
            #expect(content == expected)
        }
    }

    /// A pass that signs a version again takes the encoded pin content from the bundle served for it, and signs
    /// exactly the payload `BundlePayload.encoded()` produces; another version is encoded from its pin set.
    @Test func aSameVersionReSignTakesItsContentFromTheServedBundle() async throws {
        let identity = try TestPKI.signingIdentity()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600)
        let sets = try Self.pinSets(3)
        let seconds = Int64(Date().timeIntervalSince1970)
        let first = pass.run(sets, now: Date(timeIntervalSince1970: TimeInterval(seconds - 300))).bundles
        let served = Dictionary(uniqueKeysWithValues: first.map { ($0.customer, $0) })
        // Hosts that differ from what was signed at this version: only the served content may be used.
        var altered = sets
        altered[0].hosts.removeLast()
        altered[2].version = 2
        altered[2].hosts.removeLast()
        let again = pass.run(altered, now: Date(timeIntervalSince1970: TimeInterval(seconds)), contentOf: served).bundles
        #expect(again.count == 3)
        for (index, bundle) in again.enumerated() {
            let content = try await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [identity.certificate], at: Date()).get().content
            let source = index == 2 ? altered[2] : sets[index]
            #expect(content == BundlePayload(pinSet: source, timestamp: seconds, expires: seconds + 3600).encoded())
        }
    }

    /// A customer given without hosts is signed with the content its served bundle holds for that version, and
    /// with nothing else: without such a bundle it is not signed, rather than signed without pins.
    @Test func aCustomerWithoutHostsIsSignedFromTheServedContentOfItsVersionOnly() async throws {
        let identity = try TestPKI.signingIdentity()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600)
        let sets = try Self.pinSets(2)
        let seconds = Int64(Date().timeIntervalSince1970)
        let first = pass.run(sets, now: Date(timeIntervalSince1970: TimeInterval(seconds - 300))).bundles
        let served = Dictionary(uniqueKeysWithValues: first.map { ($0.customer, $0) })
        var changed = sets[1].header
        changed.version = 2
        let customers = [SigningPass.Customer(header: sets[0].header, hosts: nil), SigningPass.Customer(header: changed, hosts: nil)]
        let result = pass.run(customers, now: Date(timeIntervalSince1970: TimeInterval(seconds)), contentOf: served)
        #expect(result.bundles.map(\.customer) == [sets[0].customer])
        let content = try await SignatureVerifier.verify(try #require(result.bundles.first).bytes, trustAnchors: [identity.certificate], at: Date()).get().content
        #expect(content == BundlePayload(pinSet: sets[0], timestamp: seconds, expires: seconds + 3600).encoded())
        #expect(result.failures.map(\.customer) == [sets[1].customer])
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
        let content = try await SignatureVerifier.verify(try bundles[0].bytes, trustAnchors: [identity.certificate], at: Date()).get().content
        #expect(try BundlePayload.decode(content).hosts.count == 1)
    }

    /// The floor a pin set carries is published, and an identity older than it never signs.
    @Test func theRevocationFloorIsPublishedAndAnOlderSignerIsNotUsed() async throws {
        let identity = try TestPKI.signingIdentity()
        let notBefore = Int64(identity.certificate.notValidBefore.timeIntervalSince1970.rounded(.down))
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600, hostsCache: EncodedHostsCache())
        var sets = try Self.pinSets(1)
        sets[0].signersNotBefore = notBefore
        let met = pass.run(sets, now: Date())
        #expect(met.failures.isEmpty && met.defaultIdentityProblem == nil)
        let content = try await SignatureVerifier.verify(try #require(met.bundles.first).bytes, trustAnchors: [identity.certificate], at: Date()).get().content
        #expect(try BundlePayload.decode(content).signersNotBefore == notBefore)
        #expect(met.identityExpiries.map(\.signersNotBefore) == [notBefore])

        sets[0].signersNotBefore = notBefore + 1
        let refused = pass.run(sets, now: Date())
        #expect(refused.bundles.isEmpty)
        #expect(refused.failures.first?.reason.contains("revocation floor") == true, "\(refused.failures)")
        #expect(refused.defaultIdentityProblem?.contains("revocation floor") == true)
    }
}

/// One customer's unusable identity costs only that customer its new bundle.
struct SigningPassIsolationTests {
    @Test func aFailingCustomerKeepsItsLastBundleAndTheOthersAreSigned() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = try TestPKI.signingIdentity()
        let locations = SigningIdentityLocations(
            defaultKeyPath: directory.file("signing-key.pem"), defaultCertificatePath: directory.file("trust-cert.pem"),
            customerKeyDirectory: directory.file("customers")
        )
        try identity.write(keyPath: locations.defaultKeyPath, certificatePEMPath: locations.defaultCertificatePath, certificateDERPath: directory.file("trust-cert.der"))
        let own = try CustomerName("own"), plain = try CustomerName("plain")
        try FileManager.default.createDirectory(atPath: locations.directory(of: own), withIntermediateDirectories: true)
        let ownIdentity = try TestPKI.signingIdentity(commonName: "own")
        try ownIdentity.write(keyPath: locations.keyPath(of: own), certificatePEMPath: locations.certificatePEMPath(of: own), certificateDERPath: locations.certificateDERPath(of: own))
        let sets = [
            PinSet(customer: own, version: 1, hosts: [], signer: .customerOwn),
            PinSet(customer: plain, version: 1, hosts: [], signer: .deploymentDefault),
        ]
        let pass = SigningPass(identities: SigningIdentityDirectory(locations: locations), bundleLifetime: 3600)
        let cache = BundleCache()
        let first = pass.run(sets, now: Date())
        #expect(first.bundles.count == 2 && first.failures.isEmpty)
        cache.replace(with: first.bundles, failures: first.failures, signedAt: 1)
        let lastGood = try #require(cache.bundle(for: own))

        unlink(locations.keyPath(of: own))
        let second = pass.run(sets, now: Date().addingTimeInterval(1))
        #expect(second.bundles.map(\.customer) == [plain])
        #expect(second.failures.map(\.customer) == [own])
        #expect(second.defaultIdentityProblem == nil)
        cache.replace(with: second.bundles, failures: second.failures, signedAt: 2)
        #expect(try cache.bundle(for: own)?.bytes == lastGood.bytes, "served while clients still accept it")
        #expect(cache.failure(for: own)?.contains("does not exist") == true)
        #expect(cache.failure(for: plain) == nil)

        // A failing customer without a bundle is unavailable (503), not unknown (404).
        let fresh = BundleCache()
        fresh.replace(with: second.bundles, failures: second.failures, signedAt: 2)
        let handler = PinsetRequestHandler(cache: fresh, readiness: { .ready }, statusReport: { [] }, metrics: nil)
        #expect(handler.handle(PinsetRequestHandlerTests.get("/own.json.signed")).status == .serviceUnavailable)
        #expect(handler.handle(PinsetRequestHandlerTests.get("/plain.json.signed")).status == .ok)
        #expect(handler.handle(PinsetRequestHandlerTests.get("/nobody.json.signed")).status == .notFound)
    }

    /// A change pass reuses a served bundle unless its version, revocation floor or signer changed.
    @Test func reusedBundlesAreThoseSignedFromTheSameVersionFloorAndSigner() throws {
        let identity = try TestPKI.signingIdentity()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600)
        let seconds = Int64(Date().timeIntervalSince1970)
        let first = pass.run(try SigningPassTests.pinSets(3), now: Date(timeIntervalSince1970: TimeInterval(seconds - 60)))
        #expect(first.signed == 3)
        let served = Dictionary(uniqueKeysWithValues: first.bundles.map { ($0.customer, $0) })

        var sets = try SigningPassTests.pinSets(3)
        sets[1] = PinSet(customer: sets[1].customer, version: 2, hosts: sets[1].hosts)
        sets[2] = PinSet(customer: sets[2].customer, version: 1, hosts: sets[2].hosts, signersNotBefore: 1_700_000_000)
        let change = pass.run(sets, now: Date(timeIntervalSince1970: TimeInterval(seconds)), reusing: served)
        #expect(change.signed == 2)
        #expect(try change.bundles[0].bytes == served[sets[0].customer]?.bytes)
        #expect(try change.bundles[1].bytes != served[sets[1].customer]?.bytes && change.bundles[1].version == 2 && change.bundles[1].timestamp == seconds)
        #expect(try change.bundles[2].bytes != served[sets[2].customer]?.bytes && change.bundles[2].signersNotBefore == 1_700_000_000)

        // Another signer (an installed certificate) signs everything again.
        let rotated = SigningPass(signer: BundleSigner(identity: try TestPKI.signingIdentity()), bundleLifetime: 3600)
        let afterRotation = rotated.run(sets, now: Date(timeIntervalSince1970: TimeInterval(seconds)), reusing: Dictionary(uniqueKeysWithValues: change.bundles.map { ($0.customer, $0) }))
        #expect(afterRotation.signed == 3)
    }
}
