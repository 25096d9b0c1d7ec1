import Crypto
import PinsetTransparency

/// A log with its signing key and witnesses, all generated per test.
struct TestLogFixture {
    static let origin = "pinset.example.com/log"

    var log = InMemoryLog(entryCount: 0)
    /// The log's key as a key file holds it (Go's sumdb/note text form).
    let logKey: NotePrivateKey
    let logSigner: Ed25519NoteSigner
    let witnesses: [Ed25519Cosigner]

    init(entryCount: Int, witnessCount: Int = 3) throws {
        log = InMemoryLog(entryCount: entryCount)
        logKey = try NotePrivateKey(generatingFor: Self.origin, signatureType: .ed25519)
        logSigner = try logKey.makeNoteSigner()
        witnesses = try (0..<witnessCount).map {
            try Ed25519Cosigner(keyName: "witness\($0).example", privateKey: Curve25519.Signing.PrivateKey())
        }
    }

    func checkpoint(size: UInt64? = nil) throws -> Checkpoint {
        let size = size ?? log.size
        return try Checkpoint(origin: Self.origin, treeSize: size, rootHash: TreeHead.compute(size: size, from: log).rootHash)
    }

    /// The checkpoint signed by the log and cosigned by the first `cosignedBy` witnesses.
    func signedCheckpoint(size: UInt64? = nil, cosignedBy count: Int = 0, timestamp: UInt64 = 1_800_000_000) throws -> SignedNote {
        let checkpoint = try checkpoint(size: size)
        let cosignatures = try witnesses.prefix(count).map { try $0.cosign(checkpoint, timestamp: timestamp) }
        return try SignedNote(text: checkpoint.noteText, signatures: [logSigner.sign(noteText: checkpoint.noteText)] + cosignatures)
    }

    func policy(quorum: Int) throws -> TransparencyPolicy {
        try TransparencyPolicy(
            origin: Self.origin, logKeys: [Ed25519NoteVerifier(logSigner.verifierKey)],
            witnessKeys: witnesses.map { try Ed25519CosignatureVerifier($0.verifierKey) }, quorum: quorum)
    }
}
