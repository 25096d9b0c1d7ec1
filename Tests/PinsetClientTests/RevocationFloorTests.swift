import Foundation
@testable import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

/// The revocation floor (`signers-not-before`): once accepted, a bundle signed by a certificate valid from
/// earlier is refused, the floor survives a restart and never goes down; and CA signers under a root are
/// refused while a pinned self-signed CA keeps signing directly.
@Suite("Revocation floor")
struct RevocationFloorTests {
    /// An offline root with two online signers issued under it, both valid now: the older one (the "leaked"
    /// key) a week ago, the newer one a day ago.
    struct Signers {
        let root: SigningRoot
        let older: SigningIdentity
        let newer: SigningIdentity

        init() throws {
            let now = Date()
            root = try SigningRoot.generate(keyType: .p256, commonName: "Floor Test Root", validityDays: 3650, now: now.addingTimeInterval(-30 * 86_400))
            older = try Self.issue(under: root, at: now.addingTimeInterval(-7 * 86_400))
            newer = try Self.issue(under: root, at: now.addingTimeInterval(-86_400))
        }

        static func issue(under root: SigningRoot, at time: Date) throws -> SigningIdentity {
            let request = try SignerRequest.generate(keyType: .p256, commonName: "signer \(time.timeIntervalSince1970)")
            let certificate = try root.issue(for: request.request, policy: SignerCertificatePolicy(), now: time)
            return try SigningIdentity(privateKey: request.privateKey, certificate: certificate, intermediates: [root.certificate])
        }

        var newerNotBefore: Int64 { Self.seconds(newer.certificate.notValidBefore) }
        var olderNotBefore: Int64 { Self.seconds(older.certificate.notValidBefore) }
        static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
    }

    func payload(_ f: ClientFixture, version: Int64, floor: Int64?) throws -> BundlePayload {
        var payload = try f.payload(version: version, hosts: [ClientFixture.host("api.example.com", pins: ["v\(version)"])])
        payload.signersNotBefore = floor
        return payload
    }

    func serve(_ f: ClientFixture, _ payload: BundlePayload, by signer: SigningIdentity) throws {
        f.fetcher.serve(try f.signed(payload, by: signer))
    }

    @Test func anOlderSignerIsAcceptedUntilAFloorIsAndRefusedAfter() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        // Before any floor the older signer is as good as the newer: it is within its validity.
        try serve(f, try payload(f, version: 1, floor: nil), by: signers.older)
        #expect(try await updater.update().version == 1)
        #expect(await updater.signersNotBefore == nil)

        try serve(f, try payload(f, version: 2, floor: signers.newerNotBefore), by: signers.newer)
        let accepted = try await updater.update()
        #expect(accepted.payload.signersNotBefore == signers.newerNotBefore)
        #expect(await updater.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
        let fileBefore = try #require(f.stateFileBytes())

        // The leaked older key signs a higher version without a floor: refused, nothing changes.
        try serve(f, try payload(f, version: 3, floor: nil), by: signers.older)
        let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
        #expect(error.code == .revokedSigner, "\(error)")
        #expect(await updater.currentPinSet?.payload == accepted.payload)
        #expect(f.stateFileBytes() == fileBefore)
        // Nor can it pass by carrying a floor of its own that it meets.
        try serve(f, try payload(f, version: 3, floor: signers.olderNotBefore), by: signers.older)
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .revokedSigner)
        #expect(f.stateFileBytes() == fileBefore)
    }

    @Test func theFloorSurvivesARestartAndLaterBundlesCannotLowerIt() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let first = f.makeUpdater()
        try serve(f, try payload(f, version: 1, floor: signers.newerNotBefore), by: signers.newer)
        try await first.update()
        // Later bundles with no floor, then a lower one, are accepted (their signer meets the floor in force)
        // but leave the floor where it was.
        try serve(f, try payload(f, version: 2, floor: nil), by: signers.newer)
        #expect(try await first.update().version == 2)
        try serve(f, try payload(f, version: 3, floor: signers.olderNotBefore), by: signers.newer)
        #expect(try await first.update().version == 3)
        #expect(await first.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))

        // A new process on the same state directory: the floor comes back from the stored evidence.
        let restarted = f.makeUpdater()
        guard case .loaded(let stored) = await restarted.loadStoredPins() else {
            Issue.record("the stored state did not load")
            return
        }
        #expect(stored.version == 3)
        #expect(await restarted.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
        let fileBefore = try #require(f.stateFileBytes())
        try serve(f, try payload(f, version: 4, floor: nil), by: signers.older)
        let error = try await #require(throws: PinUpdateError.self) { try await restarted.update() }
        #expect(error.code == .revokedSigner, "\(error)")
        #expect(await restarted.currentPinSet?.version == 3)
        #expect(f.stateFileBytes() == fileBefore)
        // A seed shipped with an older app, signed before the floor, is refused too.
        let seed = try f.signed(try payload(f, version: 5, floor: nil), by: signers.older)
        #expect(try await #require(throws: PinUpdateError.self) { try await restarted.seed(withBundle: seed) }.code == .revokedSigner)
    }

    /// One state directory, two updaters (an app and its extension) that both started before any state was stored;
    /// then one accepted version 1, which carries the floor that revokes the older signer.
    func sharedStateDirectory() async throws -> (Signers, ClientFixture, withFloor: PinsetUpdater, unaware: PinsetUpdater) {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        let withFloor = f.makeUpdater()
        let unaware = f.makeUpdater()
        var empty = false
        if case .missing = await unaware.loadStoredPins() { empty = true }
        try #require(empty, "the state directory must start empty")
        try await withFloor.seed(withBundle: try f.signed(try payload(f, version: 1, floor: signers.newerNotBefore), by: signers.newer))
        return (signers, f, withFloor, unaware)
    }

    /// Two updaters on one state directory (an app and its extension): the one that never saw the floor is offered a
    /// newer version signed by the revoked key (a replay, or the leaked key's). It does not write it over the file
    /// that holds the floor, and reads that file at once: the floor revokes the version, which leaves force before the
    /// call returns. A fresh start (the app relaunched) finds the floor in force too.
    @Test func anUpdaterThatNeverSawTheFloorDoesNotWriteItAway() async throws {
        let (signers, f, _, unaware) = try await sharedStateDirectory()
        defer { f.directory.remove() }
        let fileWithFloor = try #require(f.stateFileBytes())
        #expect(try await unaware.seed(withBundle: try f.signed(try payload(f, version: 2, floor: nil), by: signers.older)).version == 1)
        #expect(await unaware.currentPinSet?.version == 1)
        #expect(await unaware.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
        #expect(f.stateFileBytes() == fileWithFloor)
        let declined = await unaware.stateFileFailure
        #expect(declined?.reason.contains("higher revocation floor") == true, "\(String(describing: declined))")

        let restarted = f.makeUpdater()
        guard case .loaded(let stored) = await restarted.loadStoredPins() else {
            Issue.record("the file with the floor must load")
            return
        }
        #expect(stored.version == 1)
        #expect(await restarted.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
    }

    /// Without floors: an updater that fell behind (it never saw version 2, which the other one stored) accepts version
    /// 1, still fresh, but does not write it over version 2; it takes version 2 from the file instead.
    @Test func anUpdaterBehindAnotherDoesNotWriteAnOlderVersionOverIt() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let ahead = f.makeUpdater(), behind = f.makeUpdater()
        _ = await behind.loadStoredPins()
        try await ahead.seed(withBundle: try f.signed(try f.payload(version: 2)))
        let fileAhead = try #require(f.stateFileBytes())
        #expect(try await behind.seed(withBundle: try f.signed(try f.payload(version: 1))).version == 2)
        #expect(await behind.currentPinSet?.version == 2)
        #expect(f.stateFileBytes() == fileAhead)
    }

    /// The same two updaters where the unaware one's write got through (a client library from before this rule, or a
    /// file written by hand): the updater that accepted the floor does not take the revoked version from the file.
    @Test func aStoredBundleBelowTheFloorInForceIsNotLoaded() async throws {
        let (signers, f, withFloor, _) = try await sharedStateDirectory()
        defer { f.directory.remove() }
        let revokedPayload = try payload(f, version: 2, floor: nil)
        let bytes = try f.signed(revokedPayload, by: signers.older)
        let signature = try await BundleVerifier.verifySignature(bytes, trustAnchors: [signers.root.certificate], at: f.clock.now()).get()
        let revoked = VerifiedPinSet(payload: revokedPayload, signedBundle: bytes, origin: .downloaded, signer: signature.signer)
        try StoredPinState.write(revoked, floorSource: nil, acceptedAt: f.clock.now(), configuration: f.configuration)

        guard case .rejected(let error) = await withFloor.loadStoredPins() else {
            Issue.record("a stored bundle signed below the floor in force must not be loaded")
            return
        }
        #expect(error.code == .revokedSigner, "\(error)")
        #expect(await withFloor.currentPinSet?.version == 1)
        #expect(await withFloor.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
    }

    @Test func aBundleWhoseSignerIsOlderThanItsOwnFloorIsRefused() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try serve(f, try payload(f, version: 1, floor: signers.newerNotBefore), by: signers.older)
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .revokedSigner)
        #expect(await updater.currentPinSet == nil)
        #expect(f.stateFileBytes() == nil)
    }

    @Test func aStateFileWhoseFloorWasEditedIsNotBelieved() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try serve(f, try payload(f, version: 1, floor: signers.newerNotBefore), by: signers.newer)
        try await updater.update()
        try serve(f, try payload(f, version: 2, floor: nil), by: signers.newer)
        try await updater.update()
        let stored = try #require(f.stateFileBytes())
        let text = String(decoding: stored, as: UTF8.self)
        #expect(text.contains("\"signers-not-before\":\(signers.newerNotBefore)"))
        // Lowered in the metadata: no longer what the signed evidence says.
        let lowered = text.replacingOccurrences(of: "\"signers-not-before\":\(signers.newerNotBefore)", with: "\"signers-not-before\":\(signers.olderNotBefore)")
        try Data(lowered.utf8).write(to: URL(fileURLWithPath: f.configuration.stateFilePath))
        guard case .rejected(let error) = await f.makeUpdater().loadStoredPins() else {
            Issue.record("an edited floor must not be believed")
            return
        }
        #expect(error.code == .storage, "\(error)")
    }

    /// An app whose earlier client library stored a bundle carrying a floor (ignoring the key) keeps its pins
    /// after updating the library, and takes the floor from the signed bundle.
    @Test func aStateFileFromBeforeFloorsStillLoadsAndYieldsTheFloor() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let accepted = try payload(f, version: 1, floor: signers.newerNotBefore)
        try serve(f, accepted, by: signers.newer)
        try await f.makeUpdater().update()
        // Rewritten as that library wrote it: no floor, and the digest over customer, version and hosts alone.
        let stored = try #require(f.stateFileBytes())
        let header = Array("PINSET-STATE 1\n".utf8)
        let newline = try #require(stored[header.count...].firstIndex(of: UInt8(ascii: "\n")))
        var metadata = try #require(try JSONSerialization.jsonObject(with: Data(stored[header.count..<newline])) as? [String: Any])
        var withoutFloor = accepted
        withoutFloor.signersNotBefore = nil
        #expect(metadata.removeValue(forKey: "signers-not-before") != nil)
        metadata["content-sha256"] = withoutFloor.contentDigest.hex
        let legacyLine = try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys])
        try Data(header + Array(legacyLine) + Array(stored[newline...])).write(to: URL(fileURLWithPath: f.configuration.stateFilePath))

        let restarted = f.makeUpdater()
        guard case .loaded(let loaded) = await restarted.loadStoredPins() else {
            Issue.record("a state file written before floors existed must still load")
            return
        }
        #expect(loaded.version == 1)
        #expect(await restarted.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
        let forged = try f.signed(try payload(f, version: 2, floor: nil), by: signers.older)
        #expect(try await #require(throws: PinUpdateError.self) { try await restarted.seed(withBundle: forged) }.code == .revokedSigner)
    }

    @Test func aStateFileWithLengthsThatDoNotFitIsRejectedWithoutTrapping() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        try FileManager.default.createDirectory(atPath: f.configuration.stateDirectory, withIntermediateDirectories: true)
        for (main, evidence) in [(Int.max, 1), (1, Int.max), (-1, 2)] {
            let metadata = #"{"accepted-at":1,"bundle-length":\#(main),"content-sha256":"00","customer":"acme","floor-bundle":{"bundle-length":\#(evidence),"timestamp":1},"signers-not-before":1,"timestamp":1,"version":1}"#
            try Data(Array("PINSET-STATE 1\n\(metadata)\nxx".utf8)).write(to: URL(fileURLWithPath: f.configuration.stateFilePath))
            guard case .rejected(let error) = await f.makeUpdater().loadStoredPins() else {
                Issue.record("lengths \(main) + \(evidence) must be rejected")
                continue
            }
            #expect(error.code == .storage, "\(error)")
        }
    }

    @Test func aCASignerUnderARootIsRefusedButAPinnedSelfSignedCAStillSigns() async throws {
        let root = try TestPKI.certificateAuthority(commonName: "CA Signer Test Root", extensions: Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.emailProtection])
        })
        let caSigner = try TestPKI.leaf(commonName: "CA signer", issuer: root, extensions: Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.emailProtection])
        })
        let identity = try SigningIdentity(privateKey: caSigner.privateKey, certificate: caSigner.certificate, intermediates: [root.certificate])
        let f = try ClientFixture(anchors: [root.certificate], identity: identity)
        defer { f.directory.remove() }
        try serve(f, try payload(f, version: 1, floor: nil), by: identity)
        let error = try await #require(throws: PinUpdateError.self) { try await f.makeUpdater().update() }
        #expect(error.code == .signature(.signerIsCertificateAuthority), "\(error)")
        #expect(f.stateFileBytes() == nil)

        // The same certificate pinned itself is trusted directly, as legacy deployments sign.
        var direct = f.configuration
        direct.trustAnchors = [caSigner.certificate]
        let directUpdater = PinsetUpdater(configuration: direct, fetcher: f.fetcher, now: f.clock.now)
        #expect(try await directUpdater.update().version == 1)
        // And a CA:FALSE signer under the same root is accepted.
        let plain = try TestPKI.leaf(commonName: "plain signer", issuer: root)
        let plainIdentity = try SigningIdentity(privateKey: plain.privateKey, certificate: plain.certificate, intermediates: [root.certificate])
        try serve(f, try payload(f, version: 2, floor: nil), by: plainIdentity)
        #expect(try await f.makeUpdater().update().version == 2)
    }
}
