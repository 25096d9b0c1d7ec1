import PinsetTransparency
import Testing

struct ConsistencyProofTests {
    static let log = InMemoryLog(entryCount: 70)
    static let leaves = log.entries.map(ReferenceMerkle.leaf)
    static let roots = (0...70).map { ReferenceMerkle.mth(leaves[0..<$0]) }

    @Test func everyPairOfSizesUpTo70IsProvenAndMatchesTheRFCProof() async throws {
        for newSize in 1...70 {
            for oldSize in 1...newSize {
                let proof = try ConsistencyProof.generate(oldSize: UInt64(oldSize), newSize: UInt64(newSize), from: Self.log)
                let expected = oldSize == newSize ? [] : ReferenceMerkle.proof(oldSize, Self.leaves[0..<newSize])
                #expect(proof.path == expected, "\(oldSize) → \(newSize)")
                try proof.verify(oldRoot: Self.roots[oldSize], newRoot: Self.roots[newSize])
            }
        }
        let viaAsync = try await ConsistencyProof.generate(oldSize: 13, newSize: 70, from: AsyncLogReader(log: Self.log))
        #expect(viaAsync == (try ConsistencyProof.generate(oldSize: 13, newSize: 70, from: Self.log)))
    }

    @Test func aTamperedProofIsRefusedForEveryPairUpTo70() throws {
        for newSize in 2...70 {
            for oldSize in 1..<newSize {
                let proof = try ConsistencyProof.generate(oldSize: UInt64(oldSize), newSize: UInt64(newSize), from: Self.log)
                for position in proof.path.indices {
                    var path = proof.path
                    path[position] = path[position].flippingBit(inByte: (position * 7) % 32)
                    expectRefused(oldSize, newSize, path, Self.roots[oldSize], Self.roots[newSize], "flipped \(position)")
                }
            }
        }
    }

    @Test func aWrongRootSizeOrLengthIsRefusedForEveryPairUpTo70() throws {
        for newSize in 2...70 {
            for oldSize in 1..<newSize {
                let path = try ConsistencyProof.generate(oldSize: UInt64(oldSize), newSize: UInt64(newSize), from: Self.log).path
                let oldRoot = Self.roots[oldSize], newRoot = Self.roots[newSize]
                expectRefused(oldSize, newSize, path, oldRoot.flippingBit(inByte: 3), newRoot, "wrong old root")
                expectRefused(oldSize, newSize, path, oldRoot, newRoot.flippingBit(inByte: 3), "wrong new root")
                expectRefused(oldSize, newSize, path, newRoot, oldRoot, "roots swapped")
                // The proof presented for other tree heads, each with its genuine root.
                for otherOld in [oldSize - 1, oldSize + 1] where otherOld >= 1 && otherOld < newSize {
                    expectRefused(otherOld, newSize, path, Self.roots[otherOld], newRoot, "old size \(otherOld)")
                }
                for otherNew in [newSize - 1, newSize + 1] where otherNew > oldSize && otherNew <= 70 {
                    expectRefused(oldSize, otherNew, path, oldRoot, Self.roots[otherNew], "new size \(otherNew)")
                }
                expectRefused(oldSize, newSize, Array(path.dropLast()), oldRoot, newRoot, "truncated")
                expectRefused(oldSize, newSize, Array(path.dropFirst()), oldRoot, newRoot, "first hash dropped")
                expectRefused(oldSize, newSize, path + [newRoot], oldRoot, newRoot, "extended")
                expectRefused(oldSize, newSize, [], oldRoot, newRoot, "empty")
            }
        }
    }

    @Test func aForkedLogIsRefused() throws {
        // Same first 40 entries, then the log rewrites entry 40: no proof from the honest 41 to the fork's 70 exists.
        var fork = InMemoryLog(entryCount: 40)
        fork.append(Array("forged pin set".utf8))
        for index in 41..<70 { fork.append(Self.log.entries[index]) }
        let forkRoot = try TreeHead.compute(size: 70, from: fork).rootHash
        let forkProof = try ConsistencyProof.generate(oldSize: 41, newSize: 70, from: fork)
        #expect(throws: TransparencyError(.consistencyProofFailed, "")) {
            try forkProof.verify(oldRoot: Self.roots[41], newRoot: forkRoot)
        }
        // Up to the fork point both agree.
        try ConsistencyProof.generate(oldSize: 40, newSize: 70, from: fork).verify(oldRoot: Self.roots[40], newRoot: forkRoot)
    }

    @Test func theEdgesFollowTheWitnessRules() throws {
        // From the empty tree: empty proof, and the old root must be the empty tree's hash.
        try ConsistencyProof(oldSize: 0, newSize: 9, path: []).verify(oldRoot: TreeHasher.emptyTreeHash, newRoot: Self.roots[9])
        #expect(try ConsistencyProof.generate(oldSize: 0, newSize: 9, from: Self.log).path.isEmpty)
        #expect(throws: TransparencyError(.consistencyProofFailed, "")) {
            try ConsistencyProof(oldSize: 0, newSize: 9, path: [Self.roots[9]]).verify(oldRoot: TreeHasher.emptyTreeHash, newRoot: Self.roots[9])
        }
        #expect(throws: TransparencyError(.consistencyProofFailed, "")) {
            try ConsistencyProof(oldSize: 0, newSize: 9, path: []).verify(oldRoot: Self.roots[1], newRoot: Self.roots[9])
        }
        // Equal sizes: empty proof and equal roots.
        try ConsistencyProof(oldSize: 9, newSize: 9, path: []).verify(oldRoot: Self.roots[9], newRoot: Self.roots[9])
        #expect(throws: TransparencyError(.consistencyProofFailed, "")) {
            try ConsistencyProof(oldSize: 9, newSize: 9, path: []).verify(oldRoot: Self.roots[9], newRoot: Self.roots[8])
        }
        #expect(throws: TransparencyError(.consistencyProofFailed, "")) {
            try ConsistencyProof(oldSize: 9, newSize: 9, path: [Self.roots[9]]).verify(oldRoot: Self.roots[9], newRoot: Self.roots[9])
        }
        // Shrinking is not an append.
        #expect(throws: TransparencyError(.invalidArgument, "")) { try ConsistencyProof(oldSize: 10, newSize: 9, path: []) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try ConsistencyProof.plan(oldSize: 10, newSize: 9) }
    }

    private func expectRefused(
        _ oldSize: Int, _ newSize: Int, _ path: [MerkleHash], _ oldRoot: MerkleHash, _ newRoot: MerkleHash,
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: TransparencyError(.consistencyProofFailed, ""), "\(what): \(oldSize) → \(newSize)",
                sourceLocation: sourceLocation) {
            try ConsistencyProof(oldSize: UInt64(oldSize), newSize: UInt64(newSize), path: path)
                .verify(oldRoot: oldRoot, newRoot: newRoot)
        }
    }
}
