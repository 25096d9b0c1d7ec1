import Crypto
import PinsetTransparency
import Testing

struct WitnessCheckpointValidatorTests {
    static let fixture = try! TestLogFixture(entryCount: 70)

    static func validator() throws -> WitnessCheckpointValidator {
        try WitnessCheckpointValidator(logs: [TestLogFixture.origin: [Ed25519NoteVerifier(fixture.logSigner.verifierKey)]])
    }

    static func request(old: UInt64, new: UInt64) throws -> AddCheckpointRequest {
        try AddCheckpointRequest(
            oldSize: old, consistencyProof: ConsistencyProof.generate(oldSize: old, newSize: new, from: fixture.log).path,
            checkpointNote: fixture.signedCheckpoint(size: new))
    }

    static func head(_ size: UInt64) throws -> TreeHead {
        try TreeHead.compute(size: size, from: fixture.log)
    }

    @Test func aRequestRoundTripsInTheSpecifiedFormat() throws {
        let request = try Self.request(old: 20, new: 70)
        let lines = request.encoded.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "old 20")
        #expect(lines[1..<(1 + request.consistencyProof.count)].map(String.init) == request.consistencyProof.map { Data64.encode($0.bytes) })
        #expect(lines[1 + request.consistencyProof.count] == "")
        #expect(try AddCheckpointRequest(parsing: request.encoded) == request)
    }

    @Test func theSpecificationsExampleRequestParses() throws {
        let body = """
        old 20852014
        PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
        jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=
        5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=
        /6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=

        example.com/behind-the-sofa
        20852163
        CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

        \u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
        \u{2014} example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=

        """
        let request = try AddCheckpointRequest(parsing: body)
        #expect(request.oldSize == 20_852_014)
        #expect(request.consistencyProof.count == 4)
        #expect(request.checkpointNote.signatures.count == 2)
        #expect(request.encoded == body)
    }

    @Test func aConsistentCheckpointIsAcceptedFromEveryEarlierSize() throws {
        let validator = try Self.validator()
        #expect(try validator.validate(Self.request(old: 0, new: 5), latestCosigned: nil).treeSize == 5)
        for old in 1...70 as ClosedRange<UInt64> {
            #expect(try validator.validate(Self.request(old: old, new: 70), latestCosigned: Self.head(old)).treeSize == 70)
        }
    }

    @Test func refusalsCarryTheSpecifiedStatus() throws {
        let validator = try Self.validator()
        func status(_ request: AddCheckpointRequest, _ latest: TreeHead?) -> Int? {
            do {
                _ = try validator.validate(request, latestCosigned: latest)
                return nil
            } catch {
                return error.httpStatus
            }
        }
        // 404: a log the witness does not follow.
        let stranger = try Ed25519NoteSigner(keyName: "other.example/log", privateKey: Curve25519.Signing.PrivateKey())
        let otherCheckpoint = try Checkpoint(origin: "other.example/log", treeSize: 1, rootHash: Self.head(1).rootHash)
        #expect(status(try AddCheckpointRequest(oldSize: 0, consistencyProof: [], checkpointNote: stranger.signedNote(text: otherCheckpoint.noteText)), nil) == 404)
        // 403: signed by another key under the log's name, or with a failing signature from the log's key.
        let impostor = try Ed25519NoteSigner(keyName: TestLogFixture.origin, privateKey: Curve25519.Signing.PrivateKey())
        let checkpoint = try Self.fixture.checkpoint(size: 5)
        #expect(status(try AddCheckpointRequest(oldSize: 0, consistencyProof: [], checkpointNote: impostor.signedNote(text: checkpoint.noteText)), nil) == 403)
        let good = try Self.fixture.logSigner.sign(noteText: checkpoint.noteText)
        var broken = good.signature
        broken[0] ^= 1
        let brokenNote = try SignedNote(text: checkpoint.noteText, signatures: [NoteSignature(keyName: good.keyName, keyID: good.keyID, signature: broken)])
        #expect(status(try AddCheckpointRequest(oldSize: 0, consistencyProof: [], checkpointNote: brokenNote), nil) == 403)
        // 400: old size above the checkpoint's.
        #expect(try status(AddCheckpointRequest(oldSize: 6, consistencyProof: [], checkpointNote: Self.fixture.signedCheckpoint(size: 5)), Self.head(6)) == 400)
        // 409: the log's idea of the old size is not the witness's, with the witness's size in the body.
        let stale = try Self.request(old: 10, new: 70)
        let witnessHead = try Self.head(20)
        do {
            _ = try validator.validate(stale, latestCosigned: witnessHead)
            Issue.record("a stale old size must be refused")
        } catch {
            #expect(error.httpStatus == 409)
            #expect(error.conflictBody == "20\n")
        }
        #expect(status(try Self.request(old: 10, new: 70), nil) == 409)
        // 422: a rollback to the same size with another root, a proof that fails, a proof from zero.
        var fork = InMemoryLog(entryCount: 30)
        fork.append([0xFF])
        for index in 31..<70 { fork.append(Self.fixture.log.entries[index]) }
        let forkedCheckpoint = try Checkpoint(origin: TestLogFixture.origin, treeSize: 70, rootHash: TreeHead.compute(size: 70, from: fork).rootHash)
        let forkedRequest = try AddCheckpointRequest(
            oldSize: 40, consistencyProof: ConsistencyProof.generate(oldSize: 40, newSize: 70, from: fork).path,
            checkpointNote: Self.fixture.logSigner.signedNote(text: forkedCheckpoint.noteText))
        #expect(status(forkedRequest, try Self.head(40)) == 422)
        let sameSizeOtherRoot = try AddCheckpointRequest(oldSize: 70, consistencyProof: [], checkpointNote: Self.fixture.logSigner.signedNote(text: forkedCheckpoint.noteText))
        #expect(status(sameSizeOtherRoot, try Self.head(70)) == 422)
        let proofFromZero = try AddCheckpointRequest(oldSize: 0, consistencyProof: [Self.head(1).rootHash], checkpointNote: Self.fixture.signedCheckpoint(size: 5))
        #expect(status(proofFromZero, nil) == 422)
        let emptyWithWrongRoot = try Checkpoint(origin: TestLogFixture.origin, treeSize: 0, rootHash: Self.head(1).rootHash)
        #expect(status(try AddCheckpointRequest(oldSize: 0, consistencyProof: [], checkpointNote: Self.fixture.logSigner.signedNote(text: emptyWithWrongRoot.noteText)), nil) == 422)
    }

    @Test(arguments: [
        ("no old line", "\no\n1\nAAAA\n"),
        ("old with leading zero", "old 01\n\n"),
        ("old negative", "old -1\n\n"),
        ("old missing space", "old5\n\n"),
        ("hash not base64", "old 1\nnot a hash\n\n"),
        ("no blank line", "old 0\n"),
        ("64 proof lines", "old 1\n" + String(repeating: Data64.encode([UInt8](repeating: 1, count: 32)) + "\n", count: 64) + "\n"),
    ])
    func malformedRequestsAreRefused(_ description: String, _ prefix: String) throws {
        let note = try Self.fixture.signedCheckpoint(size: 5).encoded
        #expect(throws: TransparencyError(.malformedWitnessRequest, ""), "\(description)") { try AddCheckpointRequest(parsing: prefix + note) }
    }

    @Test func aResponseOfCosignatureLinesAttachesToTheCheckpoint() throws {
        let checkpoint = try Self.fixture.checkpoint(size: 9)
        let witness = Self.fixture.witnesses[0]
        let response = try witness.cosign(checkpoint, timestamp: 1_800_000_001).line
        let lines = try NoteSignature.parseLines(response)
        let logNote = try Self.fixture.signedCheckpoint(size: 9)
        let combined = try SignedNote(text: logNote.text, signatures: logNote.signatures + lines)
        #expect(try Self.fixture.policy(quorum: 1).verify(checkpoint: combined).witnessCosignatures.first?.timestamp == 1_800_000_001)
        #expect(throws: TransparencyError(.malformedNote, "")) { try NoteSignature.parseLines(String(response.dropLast())) }
        #expect(throws: TransparencyError(.malformedNote, "")) { try NoteSignature.parseLines(response + "\n") }
    }
}
