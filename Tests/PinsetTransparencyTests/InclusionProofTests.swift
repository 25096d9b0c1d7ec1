import PinsetTransparency
import Testing

struct InclusionProofTests {
    static let log = InMemoryLog(entryCount: 70)
    static let leaves = log.entries.map(ReferenceMerkle.leaf)

    @Test func everyLeafOfEveryTreeUpTo70IsProvenAndMatchesTheRFCPath() throws {
        for size in 1...70 {
            let root = ReferenceMerkle.mth(Self.leaves[0..<size])
            for index in 0..<size {
                let proof = try InclusionProof.generate(leafIndex: UInt64(index), treeSize: UInt64(size), from: Self.log)
                #expect(proof.path == ReferenceMerkle.path(index, Self.leaves[0..<size]), "leaf \(index) of \(size)")
                try proof.verify(leafHash: Self.leaves[index], rootHash: root)
            }
        }
    }

    @Test func theAsynchronousReaderGivesTheSameProofs() async throws {
        for (index, size) in [(0, 1), (5, 6), (64, 70), (69, 70)] {
            let viaAsync = try await InclusionProof.generate(
                leafIndex: UInt64(index), treeSize: UInt64(size), from: AsyncLogReader(log: Self.log))
            #expect(viaAsync == (try InclusionProof.generate(leafIndex: UInt64(index), treeSize: UInt64(size), from: Self.log)))
        }
    }

    @Test func aTamperedProofIsRefusedForEveryLeafUpTo70() throws {
        for size in 1...70 {
            let root = ReferenceMerkle.mth(Self.leaves[0..<size])
            for index in 0..<size {
                let proof = try InclusionProof.generate(leafIndex: UInt64(index), treeSize: UInt64(size), from: Self.log)
                for position in proof.path.indices {
                    var path = proof.path
                    path[position] = path[position].flippingBit(inByte: position % 32)
                    expectRefused(try InclusionProof(leafIndex: UInt64(index), treeSize: UInt64(size), path: path),
                                  leaf: Self.leaves[index], root: root, "flipped hash \(position), leaf \(index) of \(size)")
                }
            }
        }
    }

    @Test func aWrongRootLeafIndexSizeOrLengthIsRefused() throws {
        for size in 1...70 {
            let root = ReferenceMerkle.mth(Self.leaves[0..<size])
            for index in 0..<size {
                let proof = try InclusionProof.generate(leafIndex: UInt64(index), treeSize: UInt64(size), from: Self.log)
                let leaf = Self.leaves[index]
                let context = "leaf \(index) of \(size)"
                // Wrong root, wrong leaf.
                expectRefused(proof, leaf: leaf, root: root.flippingBit(inByte: 0), "wrong root, " + context)
                expectRefused(proof, leaf: leaf.flippingBit(inByte: 31), root: root, "wrong leaf, " + context)
                // The same path claimed for the neighbouring leaf or a different tree size.
                if index + 1 < size {
                    expectRefused(try InclusionProof(leafIndex: UInt64(index + 1), treeSize: UInt64(size), path: proof.path),
                                  leaf: leaf, root: root, "next index, " + context)
                }
                if index > 0 {
                    expectRefused(try InclusionProof(leafIndex: UInt64(index - 1), treeSize: UInt64(size), path: proof.path),
                                  leaf: leaf, root: root, "previous index, " + context)
                }
                // Checked against the checkpoint of another size (its size and its root): sizes are authenticated
                // only together with their root, so that is the substitution an attacker can make.
                for otherSize in [size - 1, size + 1, 2 * size] where otherSize > index && otherSize <= 70 {
                    let otherRoot = ReferenceMerkle.mth(Self.leaves[0..<otherSize])
                    expectRefused(try InclusionProof(leafIndex: UInt64(index), treeSize: UInt64(otherSize), path: proof.path),
                                  leaf: leaf, root: otherRoot, "size \(otherSize), " + context)
                }
                // Truncated and extended paths.
                if !proof.path.isEmpty {
                    expectRefused(try InclusionProof(leafIndex: UInt64(index), treeSize: UInt64(size), path: Array(proof.path.dropLast())),
                                  leaf: leaf, root: root, "truncated, " + context)
                    expectRefused(try InclusionProof(leafIndex: UInt64(index), treeSize: UInt64(size), path: Array(proof.path.dropFirst())),
                                  leaf: leaf, root: root, "first hash dropped, " + context)
                }
                expectRefused(try InclusionProof(leafIndex: UInt64(index), treeSize: UInt64(size), path: proof.path + [root]),
                              leaf: leaf, root: root, "extended, " + context)
            }
        }
    }

    @Test func anInteriorNodeCannotBePassedOffAsAnEntry() throws {
        // The second-preimage attack on unprefixed trees: present the two children of the node over leaves 0 and 1
        // as one entry and prove it as "leaf 0 of 2" under the 4-leaf root. The 0x00/0x01 prefixes make the entry's
        // leaf hash differ from the node's hash, so the proof fails.
        let root = ReferenceMerkle.mth(Self.leaves[0..<4])
        let forgedEntry = Self.leaves[0].bytes + Self.leaves[1].bytes
        let sibling = ReferenceMerkle.node(Self.leaves[2], Self.leaves[3])
        #expect(TreeHasher.leafHash(ofEntry: forgedEntry) != ReferenceMerkle.node(Self.leaves[0], Self.leaves[1]))
        expectRefused(try InclusionProof(leafIndex: 0, treeSize: 2, path: [sibling]),
                      leaf: TreeHasher.leafHash(ofEntry: forgedEntry), root: root, "children as one entry")
    }

    @Test func impossibleArgumentsAreRefusedBeforeAnyHashing() {
        #expect(throws: TransparencyError(.invalidArgument, "")) { try InclusionProof.plan(leafIndex: 5, treeSize: 5) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try InclusionProof.plan(leafIndex: 0, treeSize: 0) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try InclusionProof(leafIndex: 3, treeSize: 2, path: []) }
        let tooLong = [MerkleHash](repeating: TreeHasher.emptyTreeHash, count: 64)
        #expect(throws: TransparencyError(.invalidArgument, "")) { try InclusionProof(leafIndex: 0, treeSize: 1, path: tooLong) }
    }

    @Test func nodePositionsStayInsideTreesOf2To63Leaves() throws {
        #expect(try MerkleNodePosition(level: 63, index: 0).leafRange == 0..<(UInt64(1) << 63))
        #expect(try MerkleNodePosition(level: 2, index: 3).leafRange == 12..<16)
        #expect(throws: TransparencyError(.invalidArgument, "")) { try MerkleNodePosition(level: 63, index: 1) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try MerkleNodePosition(level: 0, index: UInt64(1) << 63) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try MerkleNodePosition(level: 64, index: 0) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try MerkleNodePosition(level: -1, index: 0) }
    }

    @Test func aReaderThatAnswersShortIsRefused() throws {
        struct ShortReader: MerkleHashReader {
            func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] { Array(repeating: TreeHasher.emptyTreeHash, count: positions.count - 1) }
        }
        #expect(throws: TransparencyError(.hashReaderMismatch, "")) {
            try InclusionProof.generate(leafIndex: 3, treeSize: 9, from: ShortReader())
        }
    }

    @Test func aMaximalTreeNeedsOnlyAlignedStoredHashes() throws {
        // The plan for the last leaf of a tree of 2^63-1 leaves: 62 siblings, each an aligned perfect subtree.
        let size = UInt64(Int64.max)
        let plan = try InclusionProof.plan(leafIndex: size - 1, treeSize: size)
        for position in plan.positions {
            #expect(position.leafRange.lowerBound % UInt64(position.leafRange.count) == 0)
            #expect(position.leafRange.upperBound <= size)
        }
        #expect(plan.positions.count == 62)
    }
}

func expectRefused(
    _ proof: @autoclosure () throws -> InclusionProof, leaf: MerkleHash, root: MerkleHash, _ context: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let built = try proof()
        #expect(throws: TransparencyError(.inclusionProofFailed, ""), "\(context)", sourceLocation: sourceLocation) {
            try built.verify(leafHash: leaf, rootHash: root)
        }
    } catch {
        // An argument the constructor already refuses is refused too.
        #expect(error as? TransparencyError == TransparencyError(.invalidArgument, ""), "\(context)", sourceLocation: sourceLocation)
    }
}
