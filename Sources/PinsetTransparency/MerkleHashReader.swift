/// The position of a perfect subtree: the node at `level` (0 for leaves) and `index` within that level.
///
/// The node at level `L`, index `N` is the Merkle Tree Hash of leaves `[N·2^L, (N+1)·2^L)`. Only perfect subtrees
/// have positions; every hash a proof or a tile needs is one of them or is folded from a few of them, which is
/// what lets a store keep each hash exactly once, when it is completed, and never rewrite it.
public struct MerkleNodePosition: Hashable, Sendable, CustomStringConvertible {
    /// The height of the subtree, 0 for a leaf hash; at most 63.
    public let level: Int
    public let index: UInt64

    public init(level: Int, index: UInt64) throws {
        guard (0...63).contains(level) else {
            throw TransparencyError(.invalidArgument, "A Merkle node level is between 0 and 63; got \(level).")
        }
        // Trees hold at most 2^63 leaves (sizes are at most 2^63-1), so every node ends at or below leaf 2^63.
        guard index < (UInt64(1) << UInt64(63 - level)) else {
            throw TransparencyError(.invalidArgument, "Node \(index) at level \(level) lies beyond 2^63 leaves.")
        }
        self.level = level
        self.index = index
    }

    init(trustedLevel level: Int, index: UInt64) {
        self.level = level
        self.index = index
    }

    /// The leaves this node covers.
    public var leafRange: Range<UInt64> {
        let start = index << UInt64(level)
        return start..<(start + (UInt64(1) << UInt64(level)))
    }

    public var description: String { "(level \(level), index \(index))" }
}

/// Reads stored Merkle hashes by position, so proofs and tiles can be generated from any storage.
///
/// A store answers with the hash of the perfect subtree at each requested position, in the order asked, and
/// throws if one is missing. Positions come in one batch so a database can answer with one query. Callers pass
/// only positions inside the tree they are proving, so a reader never has to know the tree size.
public protocol MerkleHashReader {
    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash]
}

/// The asynchronous form of ``MerkleHashReader``, for stores whose queries suspend.
public protocol AsyncMerkleHashReader {
    func hashes(at positions: [MerkleNodePosition]) async throws -> [MerkleHash]
}

/// The stored hashes a proof or root needs, and how to fold them into the proof's hashes.
///
/// Generation is split into planning (pure arithmetic on sizes), reading (the caller's storage, synchronous or
/// not) and assembling, so the same algorithm serves every backend and can be tested without one.
public struct MerkleHashPlan: Sendable, Equatable {
    /// Every stored hash needed, in the order ``assemble(_:)`` expects them.
    public let positions: [MerkleNodePosition]
    /// For each output hash, the range of `positions` whose perfect subtrees, left to right, make it up.
    let groups: [Range<Int>]

    init(subtreeRanges: [Range<UInt64>]) {
        var positions = [MerkleNodePosition]()
        var groups = [Range<Int>]()
        for range in subtreeRanges {
            let start = positions.count
            positions.append(contentsOf: Self.perfectSubtrees(covering: range))
            groups.append(start..<positions.count)
        }
        self.positions = positions
        self.groups = groups
    }

    /// Folds the stored hashes, read for ``positions`` in order, into the output hashes.
    public func assemble(_ hashes: [MerkleHash]) throws -> [MerkleHash] {
        guard hashes.count == positions.count else {
            throw TransparencyError(
                .hashReaderMismatch, "Asked for \(positions.count) stored hashes, got \(hashes.count).")
        }
        return groups.map { group in
            // A subtree [lo, hi) that is not perfect is MTH(first perfect part) joined with the hash of the rest,
            // because the RFC 6962 split point is always the end of its largest leading power of two.
            var folded = hashes[group.upperBound - 1]
            for index in stride(from: group.upperBound - 2, through: group.lowerBound, by: -1) {
                folded = TreeHasher.nodeHash(left: hashes[index], right: folded)
            }
            return folded
        }
    }

    public func read(from reader: some MerkleHashReader) throws -> [MerkleHash] {
        try assemble(positions.isEmpty ? [] : reader.hashes(at: positions))
    }

    public func read(from reader: some AsyncMerkleHashReader) async throws -> [MerkleHash] {
        try assemble(positions.isEmpty ? [] : await reader.hashes(at: positions))
    }

    /// The perfect subtrees that tile `[lo, hi)` from the left, largest first.
    ///
    /// Every range the RFC 9162 recursions produce starts at a multiple of the largest power of two not above its
    /// width, so each piece is aligned and therefore a stored node.
    static func perfectSubtrees(covering range: Range<UInt64>) -> [MerkleNodePosition] {
        var positions = [MerkleNodePosition]()
        var start = range.lowerBound
        while start < range.upperBound {
            let width = range.upperBound - start
            var level = 63 - width.leadingZeroBitCount
            // Alignment: the piece must start on a multiple of its own width to be a stored node.
            while level > 0 && start & ((UInt64(1) << UInt64(level)) - 1) != 0 {
                level -= 1
            }
            positions.append(MerkleNodePosition(trustedLevel: level, index: start >> UInt64(level)))
            start += UInt64(1) << UInt64(level)
        }
        return positions
    }
}

/// The largest power of two strictly below `n`, the RFC 9162 split point `k` (requires `n > 1`).
func largestPowerOfTwo(below n: UInt64) -> UInt64 {
    precondition(n > 1)
    return UInt64(1) << UInt64(63 - (n - 1).leadingZeroBitCount)
}
