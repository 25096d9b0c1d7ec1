import Crypto
import PinsetTransparency

/// A log built in the test: its entries' leaf hashes, its signing key, and the checkpoints, proofs and
/// add-checkpoint requests a real log would send a witness.
struct TestLog: MerkleHashReader {
    static let origin = "pinset.example.com/log"

    let origin: String
    let signer: Ed25519NoteSigner
    /// Distinguishes the entries of a fork signed by the same key.
    let branch: String
    private(set) var leaves: [MerkleHash] = []

    init(entries: Int, origin: String = TestLog.origin, signer: Ed25519NoteSigner? = nil, branch: String = "main") throws {
        self.origin = origin
        self.signer = try signer ?? Ed25519NoteSigner(keyName: origin, privateKey: Curve25519.Signing.PrivateKey())
        self.branch = branch
        append(entries)
    }

    var size: UInt64 { UInt64(leaves.count) }
    /// The vkey an operator gives the witness for this log.
    var vkey: String { signer.verifierKey.encoded }

    mutating func append(_ count: Int) {
        for _ in 0..<count {
            leaves.append(TreeHasher.leafHash(ofEntry: Array("\(branch) pin set \(leaves.count)".utf8)))
        }
    }

    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        try positions.map { position in
            let range = position.leafRange
            guard range.upperBound <= size else { throw MissingLeaves(range: range) }
            return TreeHasher.treeHash(ofLeafHashes: Array(leaves[Int(range.lowerBound)..<Int(range.upperBound)]))
        }
    }

    struct MissingLeaves: Error {
        let range: Range<UInt64>
    }

    func checkpoint(size: UInt64? = nil) throws -> Checkpoint {
        let size = size ?? self.size
        return try Checkpoint(origin: origin, treeSize: size, rootHash: TreeHead.compute(size: size, from: self).rootHash)
    }

    func signedCheckpoint(size: UInt64? = nil) throws -> SignedNote {
        try signer.signedNote(text: checkpoint(size: size).noteText)
    }

    /// The request a log sends: its checkpoint at `new` (default: its size) and a proof from `old`.
    func request(old: UInt64, new: UInt64? = nil) throws -> AddCheckpointRequest {
        let new = new ?? size
        return try AddCheckpointRequest(
            oldSize: old, consistencyProof: ConsistencyProof.generate(oldSize: old, newSize: new, from: self).path,
            checkpointNote: signedCheckpoint(size: new))
    }
}
