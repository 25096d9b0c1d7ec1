/// A Merkle audit path (RFC 9162 §2.1.3): the sibling hashes from a leaf up to the root's child.
///
/// Generation follows §2.1.3.1 (`PATH(m, D[n])`) over stored hashes; verification is the §2.1.3.2 algorithm, which
/// also refuses a path that is too long or too short for the leaf index and tree size, so a proof cannot be padded
/// or cut to fit a different position.
public struct InclusionProof: Hashable, Sendable {
    /// The zero-based index of the leaf.
    public let leafIndex: UInt64
    /// The number of leaves in the tree the proof leads to.
    public let treeSize: UInt64
    /// Sibling hashes, from the leaf's sibling up to the root's child.
    public let path: [MerkleHash]

    /// A tree of at most 2^63 leaves has paths of at most 63 hashes.
    public static let maximumPathLength = 63

    public init(leafIndex: UInt64, treeSize: UInt64, path: [MerkleHash]) throws {
        guard leafIndex < treeSize else {
            throw TransparencyError(
                .invalidArgument, "Leaf index \(leafIndex) is not inside a tree of \(treeSize) leaves.")
        }
        guard path.count <= Self.maximumPathLength else {
            throw TransparencyError(.invalidArgument, "An inclusion proof has at most 63 hashes; got \(path.count).")
        }
        self.leafIndex = leafIndex
        self.treeSize = treeSize
        self.path = path
    }

    /// The stored hashes the proof for `leafIndex` in a tree of `treeSize` leaves is folded from.
    public static func plan(leafIndex: UInt64, treeSize: UInt64) throws -> MerkleHashPlan {
        guard leafIndex < treeSize else {
            throw TransparencyError(
                .invalidArgument, "Leaf index \(leafIndex) is not inside a tree of \(treeSize) leaves.")
        }
        return MerkleHashPlan(subtreeRanges: siblingRanges(of: leafIndex, in: 0..<treeSize))
    }

    public static func generate(
        leafIndex: UInt64, treeSize: UInt64, from reader: some MerkleHashReader
    ) throws -> InclusionProof {
        let path = try plan(leafIndex: leafIndex, treeSize: treeSize).read(from: reader)
        return try InclusionProof(leafIndex: leafIndex, treeSize: treeSize, path: path)
    }

    public static func generate(
        leafIndex: UInt64, treeSize: UInt64, from reader: some AsyncMerkleHashReader
    ) async throws -> InclusionProof {
        let path = try await plan(leafIndex: leafIndex, treeSize: treeSize).read(from: reader)
        return try InclusionProof(leafIndex: leafIndex, treeSize: treeSize, path: path)
    }

    /// `PATH(m, D[lo:hi])` as leaf ranges, deepest sibling first.
    private static func siblingRanges(of leaf: UInt64, in range: Range<UInt64>) -> [Range<UInt64>] {
        var ranges = [Range<UInt64>]()
        var current = range
        // Walk down from the root, then reverse: the path lists the deepest sibling first.
        while current.count > 1 {
            let split = current.lowerBound + largestPowerOfTwo(below: UInt64(current.count))
            if leaf < split {
                ranges.append(split..<current.upperBound)
                current = current.lowerBound..<split
            } else {
                ranges.append(current.lowerBound..<split)
                current = split..<current.upperBound
            }
        }
        return ranges.reversed()
    }

    /// Checks that `leafHash` is leaf ``leafIndex`` of the tree of ``treeSize`` leaves whose root is `rootHash`.
    ///
    /// Throws ``TransparencyError/Code/inclusionProofFailed`` with the reason; returns only when the proof holds.
    public func verify(leafHash: MerkleHash, rootHash: MerkleHash) throws {
        // RFC 9162 §2.1.3.2.
        var walk = ProofPathWalk(fn: leafIndex, sn: treeSize - 1)
        var result = leafHash
        for sibling in path {
            switch walk.next() {
            case nil:
                throw TransparencyError(
                    .inclusionProofFailed,
                    "The proof has more hashes than leaf \(leafIndex) of a tree of \(treeSize) needs.")
            case .left:
                result = TreeHasher.nodeHash(left: sibling, right: result)
            case .right:
                result = TreeHasher.nodeHash(left: result, right: sibling)
            }
        }
        guard walk.reachedRoot else {
            throw TransparencyError(
                .inclusionProofFailed,
                "The proof has fewer hashes than leaf \(leafIndex) of a tree of \(treeSize) needs.")
        }
        guard result == rootHash else {
            throw TransparencyError(
                .inclusionProofFailed, "The proof for leaf \(leafIndex) does not lead to the tree's root hash.")
        }
    }
}
