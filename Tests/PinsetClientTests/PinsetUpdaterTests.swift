import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

@Suite("Updater: accepting, replacing, trust anchors")
struct PinsetUpdaterTests {
    @Test func acceptedBundleIsInForceAndStored() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        let accepted = try await fixture.update(updater, with: try fixture.payload(version: 1))
        #expect(accepted.origin == .downloaded)
        #expect(accepted.version == 1)
        #expect(fixture.fetcher.requestedURLs == [URL(string: "https://trust.example.com/acme.json.signed")!])
        #expect(updater.evaluator.pinSet?.payload == accepted.payload)
        let stored = try #require(fixture.stateFileBytes())
        #expect(stored.starts(with: Array("PINSET-STATE 1\n".utf8)))
        // Printed in a log, it says which pins these are in one line, not the signed bytes they came in.
        let printed = String(describing: accepted)
        #expect(printed.hasPrefix("VerifiedPinSet(customer: acme, version: 1, origin: downloaded, signed: ") && printed.hasSuffix(", hosts: 1)"), "\(printed)")
    }

    @Test func freshnessAndSkewBoundariesAreInclusive() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(version: 1, signedAgo: 600))
        try await fixture.update(updater, with: try fixture.payload(version: 2, signedAgo: -60))
        #expect(await updater.currentPinSet?.version == 2)
    }

    @Test func sameVersionSameContentIsAcceptedAgain() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(version: 3, signedAgo: 100))
        let resigned = try await fixture.update(updater, with: try fixture.payload(version: 3, signedAgo: 1))
        #expect(resigned.payload.timestamp == fixture.nowSeconds - 1)
    }

    @Test func removedPinIsGoneAfterUpdateNotMerged() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        let v1Hosts = [
            try ClientFixture.host("api.example.com", pins: ["old-key", "new-key"]),
            try ClientFixture.host("cdn.example.com", pins: ["cdn-key"]),
        ]
        try await fixture.update(updater, with: try fixture.payload(version: 1, hosts: v1Hosts))
        let v2Hosts = [try ClientFixture.host("api.example.com", pins: ["new-key"])]
        try await fixture.update(updater, with: try fixture.payload(version: 2, hosts: v2Hosts))

        let api = try #require(await updater.currentPinSet?.entry(for: try Hostname("api.example.com")))
        #expect(api.spkiSHA256 == [SHA256Fingerprint(of: Array("new-key".utf8))])
        #expect(await updater.currentPinSet?.entry(for: try Hostname("cdn.example.com")) == nil)
        #expect(updater.evaluator.evaluate(host: "cdn.example.com", chain: []) == .notPinned(host: "cdn.example.com"))

        // And on disk.
        guard case .loaded(let stored) = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("no stored state")
            return
        }
        #expect(stored.hosts == v2Hosts)
    }

    @Test func firstUpdateKnowsTheStoredVersionWithoutAnExplicitLoad() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 7))
        // A new process that updates straight away must still refuse going back to version 6.
        let restarted = fixture.makeUpdater()
        let error = try await #require(throws: PinUpdateError.self) {
            try await fixture.update(restarted, with: try fixture.payload(version: 6))
        }
        #expect(error.code == .rollback)
        #expect(await restarted.currentPinSet?.version == 7)
    }

    @Test func oldAndNewTrustAnchorsAreBothAccepted() async throws {
        let old = try TestPKI.signingIdentity(commonName: "Trust Server 2024")
        let new = try TestPKI.signingIdentity(commonName: "Trust Server 2025")
        let fixture = try ClientFixture(anchors: [old.certificate, new.certificate], identity: old)
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        fixture.fetcher.serve(try fixture.signed(try fixture.payload(version: 1), by: old))
        try await updater.update()
        fixture.fetcher.serve(try fixture.signed(try fixture.payload(version: 2), by: new))
        try await updater.update()
        #expect(await updater.currentPinSet?.version == 2)

        // Once the old anchor is retired from the app, its bundles are refused.
        let retired = try ClientFixture(anchors: [new.certificate], identity: new)
        defer { retired.directory.remove() }
        retired.fetcher.serve(try retired.signed(try retired.payload(version: 1), by: old))
        let error = try await #require(throws: PinUpdateError.self) { try await retired.makeUpdater().update() }
        #expect(error.code == .signature(.untrustedSigner))
    }

    @Test func signerIssuedByTheTrustedAuthorityIsAccepted() async throws {
        let authority = try TestPKI.certificateAuthority(commonName: "Pinset Root")
        let leaf = try TestPKI.leaf(commonName: "Pinset Signer 7", issuer: authority)
        let signer = try SigningIdentity(privateKey: leaf.privateKey, certificate: leaf.certificate)
        let fixture = try ClientFixture(anchors: [authority.certificate], identity: signer)
        defer { fixture.directory.remove() }
        let accepted = try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 1))
        #expect(accepted.version == 1)
    }

    @Test func configurationReadsPEMAndDERTrustCertificates() throws {
        let identity = try TestPKI.signingIdentity()
        let next = try TestPKI.signingIdentity(commonName: "Next")
        let configuration = try PinsetClientConfiguration(
            serverURL: URL(string: "https://trust.example.com")!,
            customer: try CustomerName("acme"),
            trustCertificates: [Array(identity.certificatePEM.utf8), next.certificateDER],
            stateDirectory: "/tmp/unused"
        )
        #expect(configuration.trustAnchors == [identity.certificate, next.certificate])
        #expect(configuration.freshnessWindow == .seconds(600))
        #expect(configuration.allowedClockSkew == .seconds(60))
        #expect(throws: InputError.self) {
            try PinsetClientConfiguration(
                serverURL: URL(string: "https://trust.example.com")!,
                customer: try CustomerName("acme"),
                trustCertificates: [Array("not a certificate".utf8)],
                stateDirectory: "/tmp/unused"
            )
        }
    }
}
