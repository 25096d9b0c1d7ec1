import Crypto
import PinsetTransparency

/// A log held in memory: every perfect-subtree hash, computed as the leaves arrive, served by position.
struct InMemoryLog: MerkleHashReader {
    private(set) var entries: [[UInt8]] = []
    /// `levels[L][N]` is the hash of the perfect subtree at level L, index N.
    private(set) var levels: [[MerkleHash]] = [[]]

    init(entryCount: Int) {
        for index in 0..<entryCount {
            append(Array("pin set \(index)".utf8))
        }
    }

    var size: UInt64 { UInt64(entries.count) }

    mutating func append(_ entry: [UInt8]) {
        entries.append(entry)
        levels[0].append(TreeHasher.leafHash(ofEntry: entry))
        var level = 0
        // A node is completed when its right child is: climb while the new node is a right child.
        while levels[level].count % 2 == 0 {
            let count = levels[level].count
            let parent = TreeHasher.nodeHash(left: levels[level][count - 2], right: levels[level][count - 1])
            if levels.count == level + 1 { levels.append([]) }
            levels[level + 1].append(parent)
            level += 1
        }
    }

    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        try positions.map { position in
            guard position.level < levels.count, position.index < UInt64(levels[position.level].count) else {
                throw MissingHash(position: position)
            }
            return levels[position.level][Int(position.index)]
        }
    }

    struct MissingHash: Error {
        let position: MerkleNodePosition
    }
}

/// The same log behind the asynchronous reader protocol, as a store whose queries suspend would be.
struct AsyncLogReader: AsyncMerkleHashReader {
    let log: InMemoryLog

    func hashes(at positions: [MerkleNodePosition]) async throws -> [MerkleHash] {
        await Task.yield()
        return try log.hashes(at: positions)
    }
}

/// RFC 9162 §2.1 written as the specification's recursive definitions over the leaf hashes, to check the
/// module's iterative and store-backed versions against.
enum ReferenceMerkle {
    /// The largest power of two strictly smaller than n.
    static func split(_ n: Int) -> Int {
        var k = 1
        while k * 2 < n { k *= 2 }
        return k
    }

    /// SHA-256 written out with the 0x01 prefix, independent of `TreeHasher.nodeHash`.
    static func node(_ left: MerkleHash, _ right: MerkleHash) -> MerkleHash {
        try! MerkleHash(bytes: Array(SHA256.hash(data: [0x01] + left.bytes + right.bytes)))
    }

    static func leaf(_ entry: [UInt8]) -> MerkleHash {
        try! MerkleHash(bytes: Array(SHA256.hash(data: [0x00] + entry)))
    }

    static func mth(_ leaves: ArraySlice<MerkleHash>) -> MerkleHash {
        if leaves.isEmpty { return try! MerkleHash(bytes: Array(SHA256.hash(data: [UInt8]()))) }
        if leaves.count == 1 { return leaves.first! }
        let k = split(leaves.count)
        let start = leaves.startIndex
        return node(mth(leaves[start..<(start + k)]), mth(leaves[(start + k)...]))
    }

    /// PATH(m, D[n]).
    static func path(_ m: Int, _ leaves: ArraySlice<MerkleHash>) -> [MerkleHash] {
        if leaves.count <= 1 { return [] }
        let k = split(leaves.count)
        let start = leaves.startIndex
        if m < k {
            return path(m, leaves[start..<(start + k)]) + [mth(leaves[(start + k)...])]
        }
        return path(m - k, leaves[(start + k)...]) + [mth(leaves[start..<(start + k)])]
    }

    /// PROOF(m, D[n]) = SUBPROOF(m, D[n], true).
    static func proof(_ m: Int, _ leaves: ArraySlice<MerkleHash>) -> [MerkleHash] {
        subproof(m, leaves, true)
    }

    private static func subproof(_ m: Int, _ leaves: ArraySlice<MerkleHash>, _ b: Bool) -> [MerkleHash] {
        let n = leaves.count
        if m == n { return b ? [] : [mth(leaves)] }
        let k = split(n)
        let start = leaves.startIndex
        if m <= k {
            return subproof(m, leaves[start..<(start + k)], b) + [mth(leaves[(start + k)...])]
        }
        return subproof(m - k, leaves[(start + k)...], false) + [mth(leaves[start..<(start + k)])]
    }
}

extension MerkleHash {
    /// The same hash with one bit of one byte flipped.
    func flippingBit(inByte index: Int) -> MerkleHash {
        var copy = bytes
        copy[index] ^= 0x01
        return try! MerkleHash(bytes: copy)
    }
}
