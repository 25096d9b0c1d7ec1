import Foundation
@testable import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

/// The fast-forward attack (TUF's name): a holder of a leaked online signer key pushes the version as far as
/// it can, so that every genuine bundle after it is a rollback. The bounds cap how far, and a revocation floor
/// that revokes the held bundle's signer replaces it whatever its version.
@Suite("Fast-forward recovery")
struct FastForwardRecoveryTests {
    typealias Signers = RevocationFloorTests.Signers

    func payload(_ f: ClientFixture, version: Int64, floor: Int64? = nil, pins: [String], expiresIn: Int64 = 86_400) throws -> BundlePayload {
        var payload = try f.payload(version: version, hosts: [ClientFixture.host("api.example.com", pins: pins)], expiresIn: expiresIn)
        payload.signersNotBefore = floor
        return payload
    }

    /// The largest version the bounds let a bundle signed at `payload.timestamp` carry.
    func fastestForward(_ payload: BundlePayload) -> Int64 {
        BundleBounds.highestVersion(signedAt: payload.timestamp)
    }

    @Test func aVersionBeyondTheBoundsFromALeakedKeyIsRefusedOutright() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try f.fetcher.serve(f.signed(try payload(f, version: 10, pins: ["genuine"]), by: signers.older))
        try await updater.update()
        let fileBefore = try #require(f.stateFileBytes())

        // The reproduction of the attack: version 2^62, expiring in a century.
        let century = try payload(f, version: 1 << 62, pins: ["forged"], expiresIn: 100 * 365 * 86_400)
        f.fetcher.serve(try f.signed(century, by: signers.older))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .lifetimeTooLong)
        let fastForward = try payload(f, version: 1 << 62, pins: ["forged"])
        f.fetcher.serve(try f.signed(fastForward, by: signers.older))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .versionAheadOfSigningTime)
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.seed(withBundle: try f.signed(fastForward, by: signers.older)) }.code == .versionAheadOfSigningTime)
        #expect(await updater.currentPinSet?.version == 10)
        #expect(f.stateFileBytes() == fileBefore)
    }

    /// Under a transparency policy every bundle held was in the log, so a floor never lifts the rollback rule for
    /// a download: a leaked current key could otherwise re-sign older logged content (whose genuine proof the
    /// server serves) with a floor that revokes the held signer, and roll the app back to it.
    @Test func underATransparencyPolicyAFloorNeverLetsADownloadRollBack() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        f.fetcher.serve(try f.signed(try payload(f, version: 10, pins: ["genuine-10"]), by: signers.older))
        let held = try await f.makeUpdater().update()
        let replay = try f.signed(try payload(f, version: 5, floor: signers.newerNotBefore, pins: ["genuine-5"]), by: signers.newer)

        let unlogged = await BundleVerifier.verify(replay, configuration: f.configuration, lastAccepted: held, source: .download, at: Date())
        #expect((try? unlogged.get())?.version == 5, "without a log, the floor fast-forwards: \(unlogged)")
        var logged = f.configuration
        logged.transparency = try TestPinSetLog().clientPolicy()
        let refused = await BundleVerifier.verify(replay, configuration: logged, lastAccepted: held, source: .download, at: Date())
        guard case .failure(let error) = refused else {
            Issue.record("a download under a transparency policy rolled back from version 10 to 5")
            return
        }
        #expect(error.code == .rollback, "\(error)")
        // A seed comes with the app, not from the network or the log: recovery through it still works.
        let seed = await BundleVerifier.verify(replay, configuration: logged, lastAccepted: held, source: .seed, at: Date())
        #expect((try? seed.get())?.version == 5, "\(seed)")
    }

    @Test func aFloorThatRevokesTheHeldBundlesSignerReplacesItWhateverItsVersion() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try f.fetcher.serve(f.signed(try payload(f, version: 10, pins: ["genuine-10"]), by: signers.older))
        try await updater.update()

        // The leaked (older) key fast-forwards as far as the bounds allow; before any floor it is a valid signer.
        var forged = try payload(f, version: 0, pins: ["forged"])
        forged.version = fastestForward(forged)
        let forgedBytes = try f.signed(forged, by: signers.older)
        f.fetcher.serve(forgedBytes)
        #expect(try await updater.update().version == forged.version)

        // The operator installs the newer signer and revokes earlier ones: the genuine version is far lower.
        let recovery = try payload(f, version: 11, floor: signers.newerNotBefore, pins: ["genuine-11"])
        f.fetcher.serve(try f.signed(recovery, by: signers.newer))
        let recovered = try await updater.update()
        #expect(recovered.version == 11)
        #expect(recovered.hosts.first?.spkiSHA256 == [SHA256Fingerprint(of: Array("genuine-11".utf8))])
        #expect(await updater.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))

        // From then on the rollback rule compares against the recovered bundle.
        f.fetcher.serve(try f.signed(try payload(f, version: 10, floor: signers.newerNotBefore, pins: ["old"]), by: signers.newer))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .rollback)
        f.fetcher.serve(try f.signed(try payload(f, version: 12, pins: ["genuine-12"]), by: signers.newer))
        #expect(try await updater.update().version == 12)

        // The forged bundle, replayed (or a new one from the leaked key with a still higher version), is refused.
        let fileBefore = try #require(f.stateFileBytes())
        f.fetcher.serve(forgedBytes)
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .revokedSigner)
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.seed(withBundle: forgedBytes) }.code == .revokedSigner)
        #expect(f.stateFileBytes() == fileBefore)

        // And after a restart, from the state file.
        let restarted = f.makeUpdater()
        guard case .loaded(let stored) = await restarted.loadStoredPins() else {
            Issue.record("the recovered state did not load")
            return
        }
        #expect(stored.version == 12)
        f.fetcher.serve(forgedBytes)
        #expect(try await #require(throws: PinUpdateError.self) { try await restarted.update() }.code == .revokedSigner)
    }

    /// An app and its extension on one state directory: the extension recovers and stores the genuine bundle;
    /// the app, still holding the forged one in memory, takes it from the file whatever the versions.
    @Test func aRecoveredStateFileReplacesAFastForwardedPinSetInMemory() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let app = f.makeUpdater()
        var forged = try payload(f, version: 0, pins: ["forged"])
        forged.version = fastestForward(forged)
        f.fetcher.serve(try f.signed(forged, by: signers.older))
        #expect(try await app.update().version == forged.version)

        let fileExtension = f.makeUpdater()
        f.fetcher.serve(try f.signed(try payload(f, version: 11, floor: signers.newerNotBefore, pins: ["genuine"]), by: signers.newer))
        #expect(try await fileExtension.update().version == 11)

        guard case .loaded(let reloaded) = await app.loadStoredPins() else {
            Issue.record("the recovered state was not taken")
            return
        }
        #expect(reloaded.version == 11)
        #expect(await app.currentPinSet?.version == 11)
        #expect(await app.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
    }

    /// A client library from before the bounds may have stored a fast-forwarded bundle: it is not loaded, so its
    /// version cannot hold genuine bundles off as rollbacks.
    @Test func aStoredBundleBeyondTheVersionBoundIsNotLoaded() async throws {
        let signers = try Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let fastForward = try payload(f, version: 1 << 62, pins: ["forged"])
        let bytes = try f.signed(fastForward, by: signers.older)
        let stored = try await BundleVerifier.verifySignature(bytes, trustAnchors: [signers.root.certificate], at: f.clock.now()).get()
        // Written the way the earlier library wrote what it accepted.
        let accepted = VerifiedPinSet(payload: fastForward, signedBundle: bytes, origin: .downloaded, signer: stored.signer)
        try StoredPinState.write(accepted, floorSource: nil, acceptedAt: f.clock.now(), configuration: f.configuration)

        let updater = f.makeUpdater()
        guard case .rejected(let error) = await updater.loadStoredPins() else {
            Issue.record("a fast-forwarded stored bundle must not load")
            return
        }
        #expect(error.code == .versionAheadOfSigningTime, "\(error)")
        f.fetcher.serve(try f.signed(try payload(f, version: 5, pins: ["genuine"]), by: signers.newer))
        #expect(try await updater.update().version == 5)
    }
}
