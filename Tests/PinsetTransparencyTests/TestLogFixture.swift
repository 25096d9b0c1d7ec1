import Crypto
import PinsetTransparency

/// A log with its signing key and witnesses, all generated per test.
struct TestLogFixture {
    static let origin = "pinset.example.com/log"

    var log = InMemoryLog(entryCount: 0)
    let logSigner: Ed25519NoteSigner
    let witnesses: [Ed25519Cosigner]

    init(entryCount: Int, witnessCount: Int = 3) throws {
        log = InMemoryLog(entryCount: entryCount)
        logSigner = try Ed25519NoteSigner(keyName: Self.origin, privateKey: Curve25519.Signing.PrivateKey())
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
