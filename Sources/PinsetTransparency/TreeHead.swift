/// The root hash of a tree of a given size, computed from stored hashes.
///
/// A tree of `n` leaves needs one stored hash per set bit of `n` (its perfect subtrees, largest first), so the root
/// of any past size can be recomputed from an append-only store without keeping old roots.
public struct TreeHead: Hashable, Sendable {
    public let size: UInt64
    public let rootHash: MerkleHash

    public init(size: UInt64, rootHash: MerkleHash) {
        self.size = size
        self.rootHash = rootHash
    }

    /// The stored hashes the root of a tree of `size` leaves is folded from; empty for the empty tree.
    public static func plan(forSize size: UInt64) -> MerkleHashPlan {
        MerkleHashPlan(subtreeRanges: size == 0 ? [] : [0..<size])
    }

    public static func compute(size: UInt64, from reader: some MerkleHashReader) throws -> TreeHead {
        try TreeHead(size: size, rootHash: root(of: plan(forSize: size).read(from: reader)))
    }

    public static func compute(size: UInt64, from reader: some AsyncMerkleHashReader) async throws -> TreeHead {
        try await TreeHead(size: size, rootHash: root(of: plan(forSize: size).read(from: reader)))
    }

    private static func root(of folded: [MerkleHash]) -> MerkleHash {
        folded.first ?? TreeHasher.emptyTreeHash
    }
}
