import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTransparency
import Testing

/// The attacker holds a leaked signer key, so every bundle here verifies; only the log stands in the way. Each
/// refusal keeps the genuine pins (version 1) in force and on disk.
@Suite("Transparency: a leaked signer key's pins, absent from the log, are refused")
struct TransparencyAttackTests {
    /// A client that accepted the genuine version 1 at entry 3 of a log of 4 entries.
    private func clientHoldingGenuinePins(quorum: Int = 2) async throws -> (TransparencyFixture, PinsetUpdater) {
        var f = try TransparencyFixture(quorum: quorum)
        try f.publish(try f.client.payload(version: 1), othersBefore: 3)
        let updater = f.makeUpdater()
        try await updater.update()
        return (f, updater)
    }

    private func expectRefused(
        _ f: TransparencyFixture, _ updater: PinsetUpdater, as kind: TransparencyRefusal,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let error = await f.refusal(updater)
        #expect(error?.code == .transparency(kind), "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error.map { !$0.reason.isEmpty } == true, sourceLocation: sourceLocation)
        #expect(await updater.currentPinSet?.version == 1, sourceLocation: sourceLocation)
        guard case .loaded(let stored) = await f.makeUpdater().loadStoredPins() else {
            Issue.record("the genuine pins are no longer stored", sourceLocation: sourceLocation)
            return
        }
        #expect(stored.version == 1, sourceLocation: sourceLocation)
    }

    /// The attack on fast-forward recovery: the holder of the current signer key (newer than the one that signed the
    /// pins held) re-signs older content that is genuinely in the log, adding a revocation floor that revokes the held
    /// signer, and serves it with that content's genuine proof. Without a log the floor would replace the held pins
    /// whatever their version; under the log it is a rollback, and the pins stay, in memory and on disk.
    @Test func aLeakedCurrentKeyCannotRollBackToOlderLoggedContentWithAFloor() async throws {
        let signers = try RevocationFloorTests.Signers()
        var f = try TransparencyFixture(client: ClientFixture(anchors: [signers.root.certificate], identity: signers.newer))
        defer { f.client.directory.remove() }
        let old = try f.client.payload(version: 1, hosts: [ClientFixture.host("api.example.com", pins: ["old-key"])])
        let oldIndex = try f.log.append(old)
        let held = try f.client.payload(version: 2)
        let heldIndex = try f.log.append(held)
        f.server.serve(try f.client.signed(held, by: signers.older), at: f.bundleURL)
        try f.serveProof(index: heldIndex, under: f.log.signedCheckpoint())
        try f.server.serveTiles(f.log.tiles(), base: TransparencyFixture.tileBase)
        let updater = f.makeUpdater()
        #expect(try await updater.update().version == 2)
        let stateBefore = f.client.stateFileBytes()

        var replay = old
        replay.signersNotBefore = signers.newerNotBefore
        f.server.serve(try f.client.signed(replay, by: signers.newer), at: f.bundleURL)
        try f.serveProof(index: oldIndex, under: f.log.signedCheckpoint())
        let error = await f.refusal(updater)
        #expect(error?.code == .rollback, "\(String(describing: error))")
        #expect(await updater.currentPinSet?.version == 2)
        #expect(f.client.stateFileBytes() == stateBefore)
        guard case .loaded(let stored) = await f.makeUpdater().loadStoredPins() else {
            Issue.record("the held pins are no longer stored")
            return
        }
        #expect(stored.version == 2)
    }

    @Test func leakedKeyBundleServedWithTheGenuineVersionsProof() async throws {
        let (f, updater) = try await clientHoldingGenuinePins()
        defer { f.client.directory.remove() }
        try f.serve(try f.client.payload(version: 2, hosts: [ClientFixture.host("api.example.com", pins: ["attacker-key"])]))
        try await expectRefused(f, updater, as: .entryNotInLog)
    }

    /// The leaked key re-signs genuinely logged content with one more host entry, without pins, served with that
    /// content's genuine proof. The log's entry covers hosts with pins only, so the entry recomputed from the bundle
    /// matches; but an entry without pins makes apps refuse the hosts it covers (here every *.thirdparty.example),
    /// so it is refused as content the log does not hold.
    @Test func leakedKeyAddsAnEntryWithoutPinsToLoggedContent() async throws {
        var (f, updater) = try await clientHoldingGenuinePins()
        defer { f.client.directory.remove() }
        let genuine = try f.client.payload(version: 2)
        _ = try f.publish(genuine)
        // Written by hand: Pinset's own encoder never writes an entry without pins.
        var document = try #require(try JSONSerialization.jsonObject(with: Data(genuine.encoded())) as? [String: Any])
        document["hashes"] = (document["hashes"] as? [Any] ?? []) + [[
            "hostname": "thirdparty.example", "port": "443", "fp": [String](), "pk": [String](), "pin-sha256": [String](), "include-subdomains": true,
        ] as [String: Any]]
        let content = [UInt8](try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]))
        let attack = try BundlePayload.decode(content)
        #expect(attack.hosts.count == genuine.hosts.count + 1)
        #expect(try PinSetLogEntry(payload: attack) == PinSetLogEntry(payload: genuine), "the attack rides on the genuine entry")
        f.server.serve(try BundleSigner(identity: f.client.identity).sign(content: content), at: f.bundleURL)
        try await expectRefused(f, updater, as: .entryNotInLog)
    }

    @Test func leakedKeyBundleServedWithAnotherCustomersProof() async throws {
        let (genuine, updater) = try await clientHoldingGenuinePins()
        var f = genuine
        defer { f.client.directory.remove() }
        let attack = try f.client.payload(version: 2, hosts: [ClientFixture.host("api.example.com", pins: ["attacker-key"])])
        var other = attack
        other.customer = try CustomerName("globex")
        let index = try f.log.append(other)
        try f.serveProof(index: index, under: f.log.signedCheckpoint())
        try f.server.serveTiles(f.log.tiles(), base: TransparencyFixture.tileBase)
        try f.serve(attack)
        try await expectRefused(f, updater, as: .entryNotInLog)
    }

    @Test func checkpointForgedWithAKeyOfTheLogsName() async throws {
        let (f, updater) = try await clientHoldingGenuinePins()
        defer { f.client.directory.remove() }
        let attack = try f.client.payload(version: 2)
        var forged = f.log
        let index = try forged.append(attack)
        let impostor = try TestPinSetLog()
        try f.serveProof(index: index, under: forged.signedCheckpoint(signer: impostor.logSigner), of: forged)
        try f.serve(attack)
        try await expectRefused(f, updater, as: .untrustedCheckpoint)
    }

    @Test func checkpointSignedByALeakedLogKeyWithoutTheWitnesses() async throws {
        let (f, updater) = try await clientHoldingGenuinePins()
        defer { f.client.directory.remove() }
        let attack = try f.client.payload(version: 2)
        var hidden = f.log
        let index = try hidden.append(attack)
        try f.serveProof(index: index, under: hidden.signedCheckpoint(cosignedBy: 1), of: hidden)
        f.server.serveTiles(try hidden.tiles(), base: TransparencyFixture.tileBase)
        try f.serve(attack)
        try await expectRefused(f, updater, as: .witnessQuorumNotMet)
    }

    /// With no witnesses required, the log key alone can sign a split view: only the client's memory of the
    /// checkpoint it saw catches it.
    @Test func splitViewThatRewritesTheHistoryTheClientSaw() async throws {
        let (f, updater) = try await clientHoldingGenuinePins(quorum: 0)
        defer { f.client.directory.remove() }
        let attack = try f.client.payload(version: 2)
        // The fork keeps three of the four entries the client saw, drops the genuine version 1 and grows on.
        var fork = TestPinSetLog(reusingKeysOf: f.log, leaves: Array(f.log.leafHashes.prefix(3)))
        fork.appendOthers(20)
        let index = try fork.append(attack)
        try f.serveProof(index: index, under: fork.signedCheckpoint(cosignedBy: 0), of: fork)
        f.server.serveTiles(try fork.tiles(), base: TransparencyFixture.tileBase)
        try f.serve(attack)
        try await expectRefused(f, updater, as: .logFork)
    }

    @Test func splitViewOfTheSameSizeAsTheCheckpointHeld() async throws {
        let (f, updater) = try await clientHoldingGenuinePins(quorum: 0)
        defer { f.client.directory.remove() }
        let attack = try f.client.payload(version: 2)
        var fork = TestPinSetLog(reusingKeysOf: f.log, leaves: Array(f.log.leafHashes.prefix(3)))
        let index = try fork.append(attack)
        try f.serveProof(index: index, under: fork.signedCheckpoint(cosignedBy: 0), of: fork)
        try f.serve(attack)
        try await expectRefused(f, updater, as: .logFork)
    }

    @Test func rolledBackCheckpoint() async throws {
        let (genuine, updater) = try await clientHoldingGenuinePins()
        var f = genuine
        defer { f.client.directory.remove() }
        f.log.appendOthers(5)
        try f.serveProof(index: 3, under: f.log.signedCheckpoint())
        f.server.serveTiles(try f.log.tiles(), base: TransparencyFixture.tileBase)
        try f.serve(try f.client.payload(version: 1, signedAgo: 2))
        try await updater.update()
        // An older checkpoint, genuinely signed and cosigned, that still proves version 1.
        try f.serveProof(index: 3, under: f.log.signedCheckpoint(size: 4))
        try f.serve(try f.client.payload(version: 1, signedAgo: 1))
        try await expectRefused(f, updater, as: .checkpointRollback)
    }

    @Test func proofMissingOversizedOrNotAProof() async throws {
        let (f, updater) = try await clientHoldingGenuinePins()
        defer { f.client.directory.remove() }
        try f.serve(try f.client.payload(version: 2))
        f.server.remove(f.proofURL)
        try await expectRefused(f, updater, as: .proofUnavailable)
        f.server.serve(Array("not found".utf8), at: f.proofURL, status: 500)
        try await expectRefused(f, updater, as: .proofUnavailable)
        f.server.serve(Array(repeating: UInt8(ascii: "a"), count: 64 * 1024 + 1), at: f.proofURL)
        try await expectRefused(f, updater, as: .proofUnavailable)
        f.server.serve(Array("c2sp.org/tlog-proof@v1\nindex 3\n\nnot a note\n".utf8), at: f.proofURL)
        try await expectRefused(f, updater, as: .malformedProof)
    }

    @Test func grownLogWhoseTilesCannotBeFetched() async throws {
        let (genuine, updater) = try await clientHoldingGenuinePins()
        var f = genuine
        defer { f.client.directory.remove() }
        try f.publish(try f.client.payload(version: 2), othersBefore: 10)
        f.server.serveTiles([:], base: TransparencyFixture.tileBase)
        try await expectRefused(f, updater, as: .tilesUnavailable)
        // Tiles of the wrong length are refused as well.
        var tiles = try f.log.tiles()
        for key in tiles.keys { tiles[key]?.removeLast() }
        f.server.serveTiles(tiles, base: TransparencyFixture.tileBase)
        try await expectRefused(f, updater, as: .tilesUnavailable)
    }
}
