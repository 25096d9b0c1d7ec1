import Crypto

/// The RFC 6962 / RFC 9162 §2.1 Merkle Tree Hash over SHA-256.
///
/// Leaves and interior nodes are hashed with distinct one-byte prefixes (0x00 and 0x01) so that no interior node
/// can be presented as a leaf and the reverse (second-preimage resistance of the tree). Stateless and thread-safe.
public enum TreeHasher {
    static let leafPrefix: UInt8 = 0x00
    static let nodePrefix: UInt8 = 0x01

    /// `MTH({})`: the hash of the empty string, the root of a tree with no leaves.
    public static let emptyTreeHash = MerkleHash(trustedBytes: Array(SHA256.hash(data: [UInt8]())))

    /// `MTH({d}) = SHA-256(0x00 || d)` for one log entry `d`.
    public static func leafHash(ofEntry entry: some Collection<UInt8>) -> MerkleHash {
        var hasher = SHA256()
        hasher.update(data: [leafPrefix])
        hasher.update(data: Array(entry))
        return MerkleHash(trustedBytes: Array(hasher.finalize()))
    }

    /// `SHA-256(0x01 || left || right)` for two subtree hashes.
    public static func nodeHash(left: MerkleHash, right: MerkleHash) -> MerkleHash {
        var input = [UInt8]()
        input.reserveCapacity(1 + 2 * MerkleHash.byteCount)
        input.append(nodePrefix)
        input.append(contentsOf: left.bytes)
        input.append(contentsOf: right.bytes)
        return MerkleHash(trustedBytes: Array(SHA256.hash(data: input)))
    }

    /// The Merkle Tree Hash of a whole list of leaf hashes.
    ///
    /// Pairing neighbours level by level and carrying an odd last node up unchanged builds the same left-balanced
    /// tree as RFC 6962's split at the largest power of two, in linear time.
    public static func treeHash(ofLeafHashes leafHashes: [MerkleHash]) -> MerkleHash {
        guard !leafHashes.isEmpty else { return emptyTreeHash }
        var level = leafHashes
        while level.count > 1 {
            var next = [MerkleHash]()
            next.reserveCapacity((level.count + 1) / 2)
            var index = 0
            while index + 1 < level.count {
                next.append(nodeHash(left: level[index], right: level[index + 1]))
                index += 2
            }
            if index < level.count {
                next.append(level[index])
            }
            level = next
        }
        return level[0]
    }

    /// The Merkle Tree Hash of a list of log entries.
    public static func treeHash(ofEntries entries: [[UInt8]]) -> MerkleHash {
        treeHash(ofLeafHashes: entries.map { leafHash(ofEntry: $0) })
    }
}
