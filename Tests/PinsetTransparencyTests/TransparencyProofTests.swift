import Crypto
import PinsetTransparency
import Testing

struct TransparencyProofTests {
    @Test func aProofRoundTripsAndVerifiesUnderAWitnessedCheckpoint() throws {
        let fixture = try TestLogFixture(entryCount: 70)
        for index in [0, 1, 31, 64, 69] as [UInt64] {
            let inclusion = try InclusionProof.generate(leafIndex: index, treeSize: 70, from: fixture.log)
            let proof = try TransparencyProof(inclusion: inclusion, checkpointNote: fixture.signedCheckpoint(cosignedBy: 2))
            let parsed = try TransparencyProof(parsing: proof.encoded)
            #expect(parsed == proof)
            let verified = try fixture.policy(quorum: 2).verify(parsed, entry: fixture.log.entries[Int(index)])
            #expect(verified.leafIndex == index)
            #expect(verified.checkpoint.checkpoint.treeSize == 70)
            #expect(verified.checkpoint.witnessCosignatures.map(\.keyName) == ["witness0.example", "witness1.example"])
            #expect(verified.checkpoint.witnessCosignatures.allSatisfy { $0.timestamp == 1_800_000_000 })
        }
    }

    @Test func theEncodingFollowsTlogProofV1() throws {
        let fixture = try TestLogFixture(entryCount: 5)
        let inclusion = try InclusionProof.generate(leafIndex: 4, treeSize: 5, from: fixture.log)
        let note = try fixture.signedCheckpoint()
        let proof = try TransparencyProof(extraData: Array("context".utf8), inclusion: inclusion, checkpointNote: note)
        let expected = "c2sp.org/tlog-proof@v1\nextra \(Data64.encode(Array("context".utf8)))\nindex 4\n"
            + inclusion.path.map { Data64.encode($0.bytes) + "\n" }.joined() + "\n" + note.encoded
        #expect(proof.encoded == expected)
        #expect(try TransparencyProof(parsing: expected).extraData == Array("context".utf8))
        // A one-leaf tree has an empty path: the index line is followed directly by the blank line.
        let single = try TestLogFixture(entryCount: 1)
        let singleProof = try TransparencyProof(
            inclusion: InclusionProof.generate(leafIndex: 0, treeSize: 1, from: single.log), checkpointNote: single.signedCheckpoint())
        #expect(singleProof.encoded.hasPrefix("c2sp.org/tlog-proof@v1\nindex 0\n\n"))
        _ = try single.policy(quorum: 0).verify(TransparencyProof(parsing: singleProof.encoded), entry: single.log.entries[0])
    }

    @Test func aForgedEntryIsRefused() throws {
        // The leaked-signer attack: a bundle with other pins has no entry in the log, so no proof binds it.
        let fixture = try TestLogFixture(entryCount: 10)
        let proof = try TransparencyProof(
            inclusion: InclusionProof.generate(leafIndex: 3, treeSize: 10, from: fixture.log), checkpointNote: fixture.signedCheckpoint(cosignedBy: 1))
        #expect(throws: TransparencyError(.inclusionProofFailed, "")) {
            try fixture.policy(quorum: 1).verify(proof, entry: Array("forged pin set".utf8))
        }
        #expect(throws: TransparencyError(.inclusionProofFailed, "")) {
            try fixture.policy(quorum: 1).verify(proof, entry: fixture.log.entries[4])
        }
    }

    @Test func aCheckpointWithoutTheWitnessQuorumIsRefused() throws {
        let fixture = try TestLogFixture(entryCount: 10)
        let inclusion = try InclusionProof.generate(leafIndex: 3, treeSize: 10, from: fixture.log)
        let proof = try TransparencyProof(inclusion: inclusion, checkpointNote: fixture.signedCheckpoint(cosignedBy: 1))
        #expect(throws: TransparencyError(.witnessQuorumNotMet, "")) { try fixture.policy(quorum: 2).verify(proof, entry: fixture.log.entries[3]) }
        // The same witness twice is one witness.
        let checkpoint = try fixture.checkpoint()
        let twice = try SignedNote(text: checkpoint.noteText, signatures: [
            fixture.logSigner.sign(noteText: checkpoint.noteText),
            fixture.witnesses[0].cosign(checkpoint, timestamp: 1), fixture.witnesses[0].cosign(checkpoint, timestamp: 2),
        ])
        #expect(throws: TransparencyError(.witnessQuorumNotMet, "")) {
            try fixture.policy(quorum: 2).verify(TransparencyProof(inclusion: inclusion, checkpointNote: twice), entry: fixture.log.entries[3])
        }
    }

    @Test func aCheckpointSignedWithAStolenLogKeyButForkedIsRefusedByTheWitnessNotTheProof() throws {
        // The stolen log key signs a forked tree; no witness cosigns it, so a policy with a quorum refuses it.
        let fixture = try TestLogFixture(entryCount: 10)
        var forked = fixture
        forked.log.append(Array("forged".utf8))
        let forkedCheckpoint = try forked.signedCheckpoint()
        let proof = try TransparencyProof(
            inclusion: InclusionProof.generate(leafIndex: 10, treeSize: 11, from: forked.log), checkpointNote: forkedCheckpoint)
        #expect(try fixture.policy(quorum: 0).verify(proof, entry: Array("forged".utf8)).leafIndex == 10)
        #expect(throws: TransparencyError(.witnessQuorumNotMet, "")) { try fixture.policy(quorum: 1).verify(proof, entry: Array("forged".utf8)) }
    }

    @Test func witnessCosignaturesCannotStandInForTheLogsSignature() throws {
        let fixture = try TestLogFixture(entryCount: 4)
        let checkpoint = try fixture.checkpoint()
        let onlyWitnesses = try SignedNote(text: checkpoint.noteText, signatures: fixture.witnesses.map { try $0.cosign(checkpoint, timestamp: 5) })
        let proof = try TransparencyProof(inclusion: InclusionProof.generate(leafIndex: 0, treeSize: 4, from: fixture.log), checkpointNote: onlyWitnesses)
        #expect(throws: TransparencyError(.noTrustedSignature, "")) { try fixture.policy(quorum: 3).verify(proof, entry: fixture.log.entries[0]) }
    }

    @Test func anotherLogsCheckpointOrAnUntrustedLogKeyIsRefused() throws {
        let fixture = try TestLogFixture(entryCount: 4)
        let otherKey = try Ed25519NoteSigner(keyName: TestLogFixture.origin, privateKey: Curve25519.Signing.PrivateKey())
        let checkpoint = try fixture.checkpoint()
        let impostor = try otherKey.signedNote(text: checkpoint.noteText)
        #expect(throws: TransparencyError(.noTrustedSignature, "")) { try fixture.policy(quorum: 0).verify(checkpoint: impostor) }
        let elsewhere = try Checkpoint(origin: "other.example/log", treeSize: 4, rootHash: checkpoint.rootHash)
        #expect(throws: TransparencyError(.unexpectedOrigin, "")) {
            try fixture.policy(quorum: 0).verify(checkpoint: fixture.logSigner.signedNote(text: elsewhere.noteText))
        }
    }

    @Test func anIndexOutsideTheCheckpointIsRefused() throws {
        let fixture = try TestLogFixture(entryCount: 4)
        let path = try InclusionProof.generate(leafIndex: 3, treeSize: 4, from: fixture.log).path
        let proof = try TransparencyProof(leafIndex: 4, inclusionPath: path, checkpointNote: fixture.signedCheckpoint())
        #expect(throws: TransparencyError(.inclusionProofFailed, "")) { try fixture.policy(quorum: 0).verify(proof, entry: fixture.log.entries[3]) }
        #expect(throws: TransparencyError(.invalidArgument, "")) {
            try TransparencyProof(inclusion: InclusionProof.generate(leafIndex: 0, treeSize: 3, from: fixture.log), checkpointNote: fixture.signedCheckpoint())
        }
    }

    @Test func policiesThatCannotBeMetAreRefused() throws {
        let fixture = try TestLogFixture(entryCount: 1, witnessCount: 2)
        let logKey = try Ed25519NoteVerifier(fixture.logSigner.verifierKey)
        #expect(throws: TransparencyError(.invalidConfiguration, "")) { try TransparencyPolicy(origin: "o", logKeys: [logKey], quorum: 1) }
        #expect(throws: TransparencyError(.invalidConfiguration, "")) { try TransparencyPolicy(origin: "o", logKeys: [], quorum: 0) }
        #expect(throws: TransparencyError(.invalidConfiguration, "")) { try TransparencyPolicy(origin: "", logKeys: [logKey]) }
        #expect(throws: TransparencyError(.ambiguousVerifiers, "")) { try TransparencyPolicy(origin: "o", logKeys: [logKey], witnessKeys: [logKey], quorum: 1) }
    }

    static let hash = Data64.encode([UInt8](repeating: 9, count: 32))
    static let note = "o\n1\n\(hash)\n\n\u{2014} o AAAAAAE=\n"

    @Test(arguments: [
        ("wrong header", "c2sp.org/tlog-proof@v2\nindex 0\n\n" + note),
        ("no header", "index 0\n\n" + note),
        ("extra after index", "c2sp.org/tlog-proof@v1\nindex 0\nextra AAAA\n\n" + note),
        ("empty extra", "c2sp.org/tlog-proof@v1\nextra \nindex 0\n\n" + note),
        ("extra not base64", "c2sp.org/tlog-proof@v1\nextra ***\nindex 0\n\n" + note),
        ("no index", "c2sp.org/tlog-proof@v1\n\n" + note),
        ("index with leading zero", "c2sp.org/tlog-proof@v1\nindex 01\n\n" + note),
        ("negative index", "c2sp.org/tlog-proof@v1\nindex -1\n\n" + note),
        ("index above 2^63-1", "c2sp.org/tlog-proof@v1\nindex 9223372036854775808\n\n" + note),
        ("two spaces", "c2sp.org/tlog-proof@v1\nindex  0\n\n" + note),
        ("short hash", "c2sp.org/tlog-proof@v1\nindex 0\nAAAA\n\n" + note),
        ("hash with space", "c2sp.org/tlog-proof@v1\nindex 0\n\(hash) \n\n" + note),
        ("64 hashes", "c2sp.org/tlog-proof@v1\nindex 0\n" + String(repeating: hash + "\n", count: 64) + "\n" + note),
        ("no blank line", "c2sp.org/tlog-proof@v1\nindex 0\n" + note),
        ("no checkpoint", "c2sp.org/tlog-proof@v1\nindex 0\n\n"),
        ("truncated", "c2sp.org/tlog-proof@v1\nindex 0"),
        ("malformed checkpoint note", "c2sp.org/tlog-proof@v1\nindex 0\n\no\n1\n\(hash)\n"),
    ])
    func malformedProofsAreRefused(_ description: String, _ text: String) {
        #expect(throws: TransparencyError(.malformedProof, ""), "\(description)") { try TransparencyProof(parsing: text) }
    }
}
