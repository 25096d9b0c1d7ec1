import Crypto
import PinsetTransparency
import Testing

struct TreeHasherTests {
    @Test func theEmptyTreeHashesToSHA256OfTheEmptyString() {
        // FIPS 180-4's SHA-256 of "" — the value RFC 6962 defines MTH({}) to be.
        #expect(TreeHasher.emptyTreeHash.description
            == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(TreeHasher.emptyTreeHash.bytes == Array(SHA256.hash(data: [UInt8]())))
        #expect(TreeHasher.treeHash(ofLeafHashes: []) == TreeHasher.emptyTreeHash)
    }

    @Test func aLeafHashPrefixesTheEntryWithAZeroByte() {
        let entry = Array("acme 3 pins".utf8)
        let expected = Array(SHA256.hash(data: [0x00] + entry))
        #expect(TreeHasher.leafHash(ofEntry: entry).bytes == expected)
        #expect(TreeHasher.leafHash(ofEntry: []).bytes == Array(SHA256.hash(data: [UInt8(0x00)])))
        #expect(TreeHasher.leafHash(ofEntry: entry).bytes != Array(SHA256.hash(data: entry)))
    }

    @Test func aNodeHashPrefixesBothChildrenWithAOneByte() throws {
        let left = TreeHasher.leafHash(ofEntry: [1])
        let right = TreeHasher.leafHash(ofEntry: [2])
        let expected = Array(SHA256.hash(data: [0x01] + left.bytes + right.bytes))
        #expect(TreeHasher.nodeHash(left: left, right: right).bytes == expected)
        #expect(TreeHasher.nodeHash(left: right, right: left) != TreeHasher.nodeHash(left: left, right: right))
    }

    @Test func aTreeOfOneLeafIsItsLeafHash() {
        #expect(TreeHasher.treeHash(ofEntries: [[7]]) == TreeHasher.leafHash(ofEntry: [7]))
    }

    @Test func treesOfThreeAndSevenLeavesSplitAtTheLargestPowerOfTwo() {
        // RFC 6962 §2.1: MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])), k the largest power of 2 < n.
        func sha(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
        let entries: [[UInt8]] = (0..<7).map { [UInt8($0), 0xAB] }
        let l = entries.map { sha([0x00] + $0) }
        let three = sha([0x01] + sha([0x01] + l[0] + l[1]) + l[2])
        #expect(TreeHasher.treeHash(ofEntries: Array(entries[0..<3])).bytes == three)

        let left4 = sha([0x01] + sha([0x01] + l[0] + l[1]) + sha([0x01] + l[2] + l[3]))
        let right3 = sha([0x01] + sha([0x01] + l[4] + l[5]) + l[6])
        #expect(TreeHasher.treeHash(ofEntries: entries).bytes == sha([0x01] + left4 + right3))
    }

    @Test func theIterativeTreeHashMatchesTheRecursiveDefinitionForSizes1To70() {
        let log = InMemoryLog(entryCount: 70)
        let leaves = log.entries.map(ReferenceMerkle.leaf)
        for size in 1...70 {
            let reference = ReferenceMerkle.mth(leaves[0..<size])
            #expect(TreeHasher.treeHash(ofLeafHashes: Array(leaves[0..<size])) == reference, "size \(size)")
        }
    }

    @Test func treeHeadsFromStoredHashesMatchTheDefinitionForSizes0To70() async throws {
        let log = InMemoryLog(entryCount: 70)
        let leaves = log.entries.map(ReferenceMerkle.leaf)
        for size in 0...70 {
            let reference = ReferenceMerkle.mth(leaves[0..<size])
            #expect(try TreeHead.compute(size: UInt64(size), from: log).rootHash == reference, "size \(size)")
            #expect(try await TreeHead.compute(size: UInt64(size), from: AsyncLogReader(log: log)).rootHash == reference)
        }
        // One stored hash per set bit of the size.
        #expect(TreeHead.plan(forSize: 0b100_0101).positions.count == 3)
    }

    @Test func hashesParseOnlyFrom32BytesOfCanonicalBase64() throws {
        let hash = TreeHasher.leafHash(ofEntry: [1, 2, 3])
        #expect(try MerkleHash(base64: hash.base64) == hash)
        #expect(throws: TransparencyError(.malformedHash, "")) { try MerkleHash(bytes: [UInt8](repeating: 0, count: 31)) }
        #expect(throws: TransparencyError(.malformedHash, "")) { try MerkleHash(base64: String(hash.base64.dropLast())) }
        #expect(throws: TransparencyError(.malformedHash, "")) { try MerkleHash(base64: " " + hash.base64) }
        // 32 zero bytes end "AAA=": the last sextet's low two bits are padding and must be zero.
        #expect(throws: TransparencyError(.malformedHash, "")) {
            try MerkleHash(base64: String(repeating: "A", count: 42) + "AB=")
        }
        #expect(try MerkleHash(base64: String(repeating: "A", count: 43) + "=").bytes == [UInt8](repeating: 0, count: 32))
    }
}
