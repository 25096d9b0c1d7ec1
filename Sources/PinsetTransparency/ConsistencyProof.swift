/// A Merkle consistency proof (RFC 9162 §2.1.4): the hashes that show a tree of `oldSize` leaves is a prefix of a
/// tree of `newSize` leaves, that is, that the log only appended between the two tree heads.
///
/// Generation follows §2.1.4.1 (`PROOF(m, D[n])`) over stored hashes; verification is the §2.1.4.2 algorithm.
/// Conventions at the edges follow c2sp.org/tlog-witness: from the empty tree the proof is empty (and the old root
/// must be the empty tree's hash), and between equal sizes it is empty and the roots must be equal.
public struct ConsistencyProof: Hashable, Sendable {
    public let oldSize: UInt64
    public let newSize: UInt64
    public let path: [MerkleHash]

    /// A tree of at most 2^63 leaves has consistency proofs of at most 63 hashes (tlog-witness's limit too).
    public static let maximumPathLength = 63

    public init(oldSize: UInt64, newSize: UInt64, path: [MerkleHash]) throws {
        guard oldSize <= newSize else {
            throw TransparencyError(
                .invalidArgument, "A tree of \(newSize) leaves cannot extend a larger tree of \(oldSize).")
        }
        guard path.count <= Self.maximumPathLength else {
            throw TransparencyError(.invalidArgument, "A consistency proof has at most 63 hashes; got \(path.count).")
        }
        self.oldSize = oldSize
        self.newSize = newSize
        self.path = path
    }

    /// The stored hashes the proof from `oldSize` to `newSize` is folded from.
    public static func plan(oldSize: UInt64, newSize: UInt64) throws -> MerkleHashPlan {
        guard oldSize <= newSize else {
            throw TransparencyError(
                .invalidArgument, "A tree of \(newSize) leaves cannot extend a larger tree of \(oldSize).")
        }
        guard oldSize > 0, oldSize < newSize else { return MerkleHashPlan(subtreeRanges: []) }
        return MerkleHashPlan(subtreeRanges: subproofRanges(oldSize: oldSize, range: 0..<newSize))
    }

    public static func generate(
        oldSize: UInt64, newSize: UInt64, from reader: some MerkleHashReader
    ) throws -> ConsistencyProof {
        let path = try plan(oldSize: oldSize, newSize: newSize).read(from: reader)
        return try ConsistencyProof(oldSize: oldSize, newSize: newSize, path: path)
    }

    public static func generate(
        oldSize: UInt64, newSize: UInt64, from reader: some AsyncMerkleHashReader
    ) async throws -> ConsistencyProof {
        let path = try await plan(oldSize: oldSize, newSize: newSize).read(from: reader)
        return try ConsistencyProof(oldSize: oldSize, newSize: newSize, path: path)
    }

    /// `SUBPROOF(m, D[lo:hi], true)` as leaf ranges, in proof order.
    private static func subproofRanges(oldSize: UInt64, range: Range<UInt64>) -> [Range<UInt64>] {
        var trailing = [Range<UInt64>]()
        var remainingOld = oldSize
        var current = range
        var oldTreeIsWholeSubtree = true
        while true {
            if remainingOld == UInt64(current.count) {
                // SUBPROOF(m, D[m], true) is empty: the verifier already knows the old root.
                if !oldTreeIsWholeSubtree {
                    trailing.append(current)
                }
                break
            }
            let split = current.lowerBound + largestPowerOfTwo(below: UInt64(current.count))
            if remainingOld <= split - current.lowerBound {
                trailing.append(split..<current.upperBound)
                current = current.lowerBound..<split
            } else {
                remainingOld -= split - current.lowerBound
                trailing.append(current.lowerBound..<split)
                current = split..<current.upperBound
                oldTreeIsWholeSubtree = false
            }
        }
        return trailing.reversed()
    }

    /// Checks that the tree of ``oldSize`` leaves with `oldRoot` is a prefix of the tree of ``newSize`` leaves with
    /// `newRoot`. Throws ``TransparencyError/Code/consistencyProofFailed`` with the reason.
    public func verify(oldRoot: MerkleHash, newRoot: MerkleHash) throws {
        if oldSize == 0 {
            guard path.isEmpty else {
                throw TransparencyError(.consistencyProofFailed, "A proof from the empty tree must be empty.")
            }
            guard oldRoot == TreeHasher.emptyTreeHash else {
                throw TransparencyError(
                    .consistencyProofFailed, "A tree of size 0 must have the empty tree's root hash.")
            }
            return
        }
        if oldSize == newSize {
            guard path.isEmpty else {
                throw TransparencyError(.consistencyProofFailed, "A proof between equal sizes must be empty.")
            }
            guard oldRoot == newRoot else {
                throw TransparencyError(
                    .consistencyProofFailed, "Two tree heads of size \(oldSize) have different root hashes.")
            }
            return
        }
        // RFC 9162 §2.1.4.2.
        guard !path.isEmpty else {
            throw TransparencyError(.consistencyProofFailed, "The consistency proof is empty.")
        }
        var proof = path
        if oldSize & (oldSize - 1) == 0 {
            proof.insert(oldRoot, at: 0)
        }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var walk = ProofPathWalk(fn: fn, sn: sn)
        var oldResult = proof[0]
        var newResult = proof[0]
        for hash in proof.dropFirst() {
            switch walk.next() {
            case nil:
                throw TransparencyError(
                    .consistencyProofFailed,
                    "The proof has more hashes than sizes \(oldSize) and \(newSize) need.")
            case .left:
                oldResult = TreeHasher.nodeHash(left: hash, right: oldResult)
                newResult = TreeHasher.nodeHash(left: hash, right: newResult)
            case .right:
                newResult = TreeHasher.nodeHash(left: newResult, right: hash)
            }
        }
        guard walk.reachedRoot else {
            throw TransparencyError(
                .consistencyProofFailed, "The proof has fewer hashes than sizes \(oldSize) and \(newSize) need.")
        }
        guard oldResult == oldRoot else {
            throw TransparencyError(
                .consistencyProofFailed, "The proof does not reproduce the root hash of size \(oldSize).")
        }
        guard newResult == newRoot else {
            throw TransparencyError(
                .consistencyProofFailed, "The proof does not reproduce the root hash of size \(newSize).")
        }
    }
}
