import Foundation
import PinsetClient
import PinsetCore
import PinsetTransparency
import Testing

@Suite("Transparency: pins installed only when the log proves them")
struct TransparencyUpdateTests {
    @Test func aPinSetTheLogProvesIsInstalledWithItsCheckpoint() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        let index = try f.publish(try f.client.payload(version: 1), othersBefore: 5)
        let updater = f.makeUpdater()

        let accepted = try await updater.update()

        #expect(accepted.version == 1)
        #expect(f.server.requestedURLs == [
            URL(string: "https://trust.example.com/acme.json.signed")!,
            URL(string: "https://trust.example.com/acme.json.proof?version=1")!,
        ])
        let inclusion = try #require(await updater.lastVerifiedInclusion)
        #expect(inclusion.leafIndex == index)
        #expect(inclusion.checkpoint.checkpoint == (try f.log.checkpoint()))
        #expect(inclusion.checkpoint.witnessCosignatures.map(\.keyName) == ["witness0.example", "witness1.example"])
        #expect(await updater.transparencyCheckpoint?.checkpoint.treeSize == 6)
    }

    @Test func withoutAPolicyNoProofIsFetched() async throws {
        let f = try TransparencyFixture(withPolicy: false)
        defer { f.client.directory.remove() }
        try f.serve(try f.client.payload(version: 1))

        let accepted = try await f.makeUpdater().update()

        #expect(accepted.version == 1)
        #expect(f.server.requestedURLs == [URL(string: "https://trust.example.com/acme.json.signed")!])
        // Without a policy the state file holds no checkpoint, exactly as before transparency.
        let state = String(decoding: try #require(f.client.stateFileBytes()), as: UTF8.self)
        #expect(!state.contains("checkpoint"))
    }

    @Test func aGrownLogIsAcceptedAfterProvingItExtendsTheCheckpointHeld() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 1), othersBefore: 3)
        let updater = f.makeUpdater()
        try await updater.update()
        // Across a full tile and into the second tile level: the check needs level-0 and level-1 tiles.
        try f.publish(try f.client.payload(version: 2), othersBefore: 600)
        f.server.forgetRequests()

        let accepted = try await updater.update()

        #expect(accepted.version == 2)
        #expect(await updater.transparencyCheckpoint?.checkpoint.treeSize == 605)
        let tiles = f.server.requestedURLs.map(\.absoluteString).filter { $0.hasPrefix(TransparencyFixture.tileBase.absoluteString) }
        #expect(!tiles.isEmpty)
        #expect(tiles.count <= 4, "only the tiles holding the proof's hashes: \(tiles)")
    }

    @Test func aPartialTileTheLogDeletedIsReadFromTheFullTile() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 1), othersBefore: 2)
        let updater = f.makeUpdater()
        try await updater.update()
        try f.publish(try f.client.payload(version: 2), othersBefore: 100)
        // The checkpoint held says 104 leaves; serve the tiles of a log that has since grown past 256 and
        // deleted its partial level-0 tiles.
        var grown = f.log
        grown.appendOthers(300)
        var tiles = try grown.tiles()
        tiles = tiles.filter { !$0.key.hasPrefix("tile/0/000.p/") }
        f.server.serveTiles(tiles, base: TransparencyFixture.tileBase)

        #expect(try await updater.update().version == 2)
    }

    @Test func theCheckpointHeldSurvivesARestart() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        let index = try f.publish(try f.client.payload(version: 1), othersBefore: 4)
        f.log.appendOthers(3)
        let held = try f.log.signedCheckpoint()
        try f.serveProof(index: index, under: held)
        try await f.makeUpdater().update()

        let restarted = f.makeUpdater()
        guard case .loaded(let pins) = await restarted.loadStoredPins() else {
            Issue.record("the stored pins did not load")
            return
        }
        #expect(pins.version == 1)
        #expect(await restarted.transparencyCheckpoint?.note == held)

        // The restarted client still refuses a smaller tree than the one it saw before the restart.
        try f.serveProof(index: index, under: f.log.signedCheckpoint(size: 5))
        try f.serve(try f.client.payload(version: 1, signedAgo: 1))
        let error = await f.refusal(restarted)
        #expect(error?.code == .transparency(.checkpointRollback))
    }

    @Test func aStateFileFromBeforeThePolicyLoadsAndTheFirstCheckpointIsTrustedOnFirstUse() async throws {
        var f = try TransparencyFixture(withPolicy: false)
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 1), othersBefore: 1)
        try await f.makeUpdater().update()
        f.client.configuration.transparency = try f.log.clientPolicy()

        let updater = f.makeUpdater()
        guard case .loaded(let pins) = await updater.loadStoredPins() else {
            Issue.record("a state file without a checkpoint must still load")
            return
        }
        #expect(pins.version == 1)
        #expect(await updater.transparencyCheckpoint == nil)
        try f.publish(try f.client.payload(version: 2), othersBefore: 3)
        #expect(try await updater.update().version == 2)
        #expect(await updater.transparencyCheckpoint?.checkpoint.treeSize == 6)
    }

    /// An app that moves to another log (new origin or keys, a smaller tree): the old log's larger checkpoint in the
    /// state file is not the configured log's, so it neither stands for the checkpoint held nor keeps the file from
    /// being written.
    @Test func anAppThatMovesToAnotherLogKeepsWritingItsState() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 1), othersBefore: 9)
        try await f.makeUpdater().update()

        f.log = try TestPinSetLog()
        f.client.configuration.transparency = try f.log.clientPolicy()
        let moved = f.makeUpdater()
        guard case .loaded = await moved.loadStoredPins() else {
            Issue.record("the stored pins must load")
            return
        }
        #expect(await moved.transparencyCheckpoint == nil, "the old log's checkpoint is not held for the new one")
        try f.publish(try f.client.payload(version: 2), othersBefore: 1)
        #expect(try await moved.update().version == 2)
        let failure = await moved.stateFileFailure
        #expect(failure == nil, "\(String(describing: failure))")
        guard case .loaded(let stored) = await f.makeUpdater().loadStoredPins() else {
            Issue.record("the new state must load")
            return
        }
        #expect(stored.version == 2)
    }

    @Test func aStateFileWhoseCheckpointWasTamperedWithIsNotLoaded() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 1))
        try await f.makeUpdater().update()
        let path = f.client.configuration.stateFilePath
        let bytes = try #require(f.client.stateFileBytes())
        let tampered = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"checkpoint\":\"", with: "\"checkpoint\":\"x")
        #expect(tampered != String(decoding: bytes, as: UTF8.self))
        try Data(tampered.utf8).write(to: URL(fileURLWithPath: path))

        guard case .rejected(let error) = await f.makeUpdater().loadStoredPins() else {
            Issue.record("a state file with a checkpoint that is not a signed note must be refused")
            return
        }
        #expect(error.code == .storage)
    }

    @Test func aSameVersionRefreshNeedsAProofButNeverDropsThePins() async throws {
        var f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 3, signedAgo: 100))
        let updater = f.makeUpdater()
        try await updater.update()
        try f.serve(try f.client.payload(version: 3, signedAgo: 1))
        f.server.remove(f.proofURL)

        let error = await f.refusal(updater)

        #expect(error?.code == .transparency(.proofUnavailable))
        #expect(await updater.currentPinSet?.payload.timestamp == f.client.nowSeconds - 100)
        // With the proof back, the re-signed bundle replaces the one held.
        try f.serveProof(index: 0, under: f.log.signedCheckpoint())
        #expect(try await updater.update().payload.timestamp == f.client.nowSeconds - 1)
    }

    @Test func aSeedShippedWithTheAppNeedsNoProof() async throws {
        let f = try TransparencyFixture()
        defer { f.client.directory.remove() }
        let seeded = try await f.makeUpdater().seed(withBundle: try f.client.signed(try f.client.payload(version: 1)))
        #expect(seeded.version == 1)
        #expect(f.server.requestedURLs.isEmpty)
    }

    @Test func thePolicyIsBuiltFromTheVkeysAnAppShips() throws {
        let log = try TestPinSetLog()
        let policy = try log.clientPolicy(quorum: 1)
        #expect(policy.policy.origin == TestPinSetLog.origin)
        #expect(policy.policy.quorum == 1)
        #expect(throws: TransparencyError.self) {
            try ClientTransparencyPolicy(origin: TestPinSetLog.origin, logKeys: ["not a vkey"])
        }
        // A witness key given as the log's key is refused: it cannot sign a checkpoint.
        #expect(throws: TransparencyError.self) {
            try ClientTransparencyPolicy(origin: TestPinSetLog.origin, logKeys: [log.witnesses[0].verifierKey.encoded])
        }
        #expect(throws: TransparencyError.self) {
            try ClientTransparencyPolicy(
                origin: TestPinSetLog.origin, logKeys: [log.logSigner.verifierKey.encoded], quorum: 1)
        }
    }

    @Test func tilesGiveTheHashesTheLogStores() throws {
        var log = try TestPinSetLog()
        log.appendOthers(700)
        let plan = try ConsistencyProof.plan(oldSize: 300, newSize: 700)
        var reader = TileHashReader(treeSize: 700)
        let tiles = try log.tiles()
        for tile in try TileHashReader.tiles(holding: plan.positions, treeSize: 700) {
            try reader.add(try #require(tiles[tile.path]), of: tile)
        }
        #expect(try reader.hashes(at: plan.positions) == log.hashes(at: plan.positions))
        let proof = try ConsistencyProof.generate(oldSize: 300, newSize: 700, from: reader)
        try proof.verify(oldRoot: log.checkpoint(size: 300).rootHash, newRoot: log.checkpoint().rootHash)
    }
}
