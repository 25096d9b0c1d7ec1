import Crypto
import PinsetTransparency
import Testing

struct Ed25519CosignatureTests {
    static let checkpoint = try! Checkpoint(origin: "pinset.example.com/log", treeSize: 3, rootHash: TreeHasher.treeHash(ofEntries: [[1], [2], [3]]))

    @Test func aCosignatureSignsTheV1HeaderTheTimeLineAndTheCheckpoint() throws {
        let key = Curve25519.Signing.PrivateKey()
        let cosigner = try Ed25519Cosigner(keyName: "witness.example/w1", privateKey: key)
        let line = try cosigner.cosign(Self.checkpoint, timestamp: 1_679_315_147)
        // Timestamp big-endian, then a signature over the message of c2sp.org/tlog-cosignature.
        #expect(line.signature.count == 72)
        #expect(Array(line.signature[0..<8]) == [0, 0, 0, 0, 0x64, 0x18, 0x50, 0xCB])
        let message = Array("cosignature/v1\ntime 1679315147\n".utf8) + Array(Self.checkpoint.noteText.utf8)
        #expect(key.publicKey.isValidSignature(Array(line.signature[8...]), for: message))
        // Its key ID uses type byte 0x04.
        let digest = Array(SHA256.hash(data: Array("witness.example/w1".utf8) + [0x0A, 0x04] + Array(key.publicKey.rawRepresentation)))
        #expect(line.keyID == UInt32(digest[0]) << 24 | UInt32(digest[1]) << 16 | UInt32(digest[2]) << 8 | UInt32(digest[3]))
        #expect(cosigner.verifierKey.signatureType == .ed25519Cosignature)
    }

    @Test func aCosignedCheckpointVerifiesWithItsTimestamp() throws {
        let cosigner = try Ed25519Cosigner(keyName: "witness.example/w1", privateKey: Curve25519.Signing.PrivateKey())
        let log = try Ed25519NoteSigner(keyName: "pinset.example.com/log", privateKey: Curve25519.Signing.PrivateKey())
        let note = try SignedNote(text: Self.checkpoint.noteText, signatures: [
            log.sign(noteText: Self.checkpoint.noteText), cosigner.cosign(Self.checkpoint, timestamp: 1_700_000_000),
        ])
        let witness = try Ed25519CosignatureVerifier(verifierKey: cosigner.verifierKey.encoded)
        let verified = try NoteVerifierSet([witness]).verify(SignedNote(parsing: note.encoded))
        #expect(verified.verifiedSignatures.map(\.timestamp) == [1_700_000_000])
        #expect(verified.unknownSignatures.map(\.keyName) == ["pinset.example.com/log"])
    }

    @Test func aCosignatureDoesNotVerifyAsAPlainNoteSignatureOrForAnotherTimeOrCheckpoint() throws {
        let key = Curve25519.Signing.PrivateKey()
        let cosigner = try Ed25519Cosigner(keyName: "w.example", privateKey: key)
        let line = try cosigner.cosign(Self.checkpoint, timestamp: 1_700_000_000)
        let witness = try Ed25519CosignatureVerifier(cosigner.verifierKey)
        // Another timestamp in the line.
        var retimed = line.signature
        retimed[7] ^= 1
        #expect(witness.check(signature: retimed, over: Self.checkpoint.noteText) != .valid(timestamp: 1_700_000_001))
        guard case .invalid = witness.check(signature: retimed, over: Self.checkpoint.noteText) else {
            Issue.record("a changed timestamp must not verify")
            return
        }
        // Another checkpoint.
        let other = try Checkpoint(origin: "pinset.example.com/log", treeSize: 4, rootHash: TreeHasher.treeHash(ofEntries: [[1], [2], [3], [4]]))
        guard case .invalid = witness.check(signature: line.signature, over: other.noteText) else {
            Issue.record("a cosignature must not verify for another checkpoint")
            return
        }
        // The same key used as a plain Ed25519 note key does not accept the cosignature.
        let plain = try Ed25519NoteVerifier(NoteVerifierKey(keyName: "w.example", signatureType: .ed25519, publicKey: Array(key.publicKey.rawRepresentation)))
        #expect(plain.keyID != witness.keyID)
        guard case .invalid = plain.check(signature: Array(line.signature[8...]), over: Self.checkpoint.noteText) else {
            Issue.record("a cosignature must not verify as a plain signature")
            return
        }
    }

    @Test func timestampsOutOfRangeAndNonCheckpointTextsAreRefused() throws {
        let key = Curve25519.Signing.PrivateKey()
        let cosigner = try Ed25519Cosigner(keyName: "w.example", privateKey: key)
        #expect(throws: TransparencyError(.malformedCosignature, "")) { try cosigner.cosign(Self.checkpoint, timestamp: 0) }
        #expect(throws: TransparencyError(.malformedCosignature, "")) { try cosigner.cosign(Self.checkpoint, timestamp: UInt64(Int64.max) + 1) }
        let witness = try Ed25519CosignatureVerifier(cosigner.verifierKey)
        // A correctly signed message whose timestamp exceeds 2^63-1.
        let huge = UInt64(Int64.max) + 1
        let message = Array("cosignature/v1\ntime \(huge)\n".utf8) + Array(Self.checkpoint.noteText.utf8)
        let timestampBytes: [UInt8] = [0x80, 0, 0, 0, 0, 0, 0, 0]
        let signature = try timestampBytes + Array(key.signature(for: message))
        guard case .invalid = witness.check(signature: signature, over: Self.checkpoint.noteText) else {
            Issue.record("a timestamp above 2^63-1 must be refused")
            return
        }
        // A correctly signed cosignature over a text that is not a checkpoint.
        let text = "not a checkpoint\n"
        let notCheckpoint = try [0, 0, 0, 0, 0, 0, 0, 1] + Array(key.signature(for: Array("cosignature/v1\ntime 1\n\(text)".utf8)))
        guard case .invalid = witness.check(signature: notCheckpoint, over: text) else {
            Issue.record("only checkpoints can be cosigned")
            return
        }
        guard case .invalid = witness.check(signature: Array(notCheckpoint.dropLast()), over: text) else {
            Issue.record("a short cosignature must be refused")
            return
        }
    }

    /// A cosignature does not sign its witness's name: one witness key listed under two names would let a single
    /// witness (or whoever holds its key) meet a quorum of two with one cosignature, signed once and copied under the
    /// second name. Such a policy is refused, and so is a log key listed as a witness.
    @Test func oneKeyUnderTwoNamesIsRefusedAsAPolicyNotCountedTwice() throws {
        let key = Curve25519.Signing.PrivateKey()
        let first = try Ed25519Cosigner(keyName: "witness-a.example", privateKey: key)
        let second = try Ed25519Cosigner(keyName: "witness-b.example", privateKey: key)
        let log = try Ed25519NoteSigner(keyName: "pinset.example.com/log", privateKey: Curve25519.Signing.PrivateKey())
        let witnesses = try [first, second].map { try Ed25519CosignatureVerifier($0.verifierKey) as any NoteVerifier }
        let logKey = try Ed25519NoteVerifier(log.verifierKey)
        #expect(throws: TransparencyError.self) {
            try TransparencyPolicy(origin: "pinset.example.com/log", logKeys: [logKey], witnessKeys: witnesses, quorum: 2)
        }
        let logAsWitness = try Ed25519CosignatureVerifier(try NoteVerifierKey(keyName: "witness-c.example", signatureType: .ed25519Cosignature,
                                                                              publicKey: try #require(logKey.publicKeyBytes)))
        #expect(throws: TransparencyError.self) {
            try TransparencyPolicy(origin: "pinset.example.com/log", logKeys: [logKey], witnessKeys: [witnesses[0], logAsWitness], quorum: 1)
        }
        // Two distinct witness keys make a policy, and one cosignature copied under the other's name does not count.
        let other = try Ed25519Cosigner(keyName: "witness-b.example", privateKey: Curve25519.Signing.PrivateKey())
        let policy = try TransparencyPolicy(origin: "pinset.example.com/log", logKeys: [logKey],
                                            witnessKeys: [witnesses[0], try Ed25519CosignatureVerifier(other.verifierKey)], quorum: 2)
        let cosigned = try first.cosign(Self.checkpoint, timestamp: 1_700_000_000)
        let copied = try NoteSignature(keyName: "witness-b.example", keyID: cosigned.keyID, signature: cosigned.signature)
        let note = try SignedNote(text: Self.checkpoint.noteText, signatures: [try log.sign(noteText: Self.checkpoint.noteText), cosigned, copied])
        #expect(throws: TransparencyError.self) { try policy.verify(checkpoint: try SignedNote(parsing: note.encoded)) }
    }
}
