import PinsetTransparency

/// Fetches the entries `[start, treeSize)` of a verified checkpoint and proves they are the ones it commits to.
///
/// Two checks, both against the log's tiles: each entry's recomputed leaf hash must equal the level-0 hash tile's
/// (which names the first entry that differs), and the tree root folded from those leaf hashes and, for the entries
/// before `start`, the stored hashes in the tiles must be the checkpoint's signed root. The second check binds the
/// entries to the signature; the first only makes a mismatch precise.
struct LogEntryRangeCheck: Sendable {
    let tiles: LogTileFetcher
    let maximumTileFetches: Int

    func entries(from start: UInt64, of checkpoint: Checkpoint) async throws(LogMonitorError) -> [[UInt8]] {
        var entries = [[UInt8]]()
        var leafHashes = [MerkleHash]()
        for bundle in TileLayout.entryBundles(growingFrom: start, to: checkpoint.treeSize) {
            let bundleEntries = try await tiles.entries(of: bundle)
            let leafTile = try tileAddress(.hashes(level: 0), index: bundle.index, width: bundle.width)
            let tileHashes = try await tiles.hashes(of: leafTile)
            let firstIndex = bundle.index * UInt64(TileAddress.fullWidth)
            for offset in 0..<bundle.width where firstIndex + UInt64(offset) >= start {
                let leafHash = TreeHasher.leafHash(ofEntry: bundleEntries[offset])
                guard leafHash == tileHashes[offset] else {
                    throw LogMonitorError(
                        .entriesMismatch,
                        "Entry \(firstIndex + UInt64(offset)) in \(bundle.path) has leaf hash \(leafHash.base64), but the log's tile \(leafTile.path) holds \(tileHashes[offset].base64): the log serves entries other than the ones it hashed. Report it to the log's operator.")
                }
                entries.append(bundleEntries[offset])
                leafHashes.append(leafHash)
            }
        }
        let root = try await rootHash(of: checkpoint.treeSize, newLeavesFrom: start, newLeafHashes: leafHashes)
        guard root == checkpoint.rootHash else {
            throw LogMonitorError(
                .entriesMismatch,
                "The entries \(start)..<\(checkpoint.treeSize) with the log's tiles give the root \(root.base64), but the checkpoint signs \(checkpoint.rootHash.base64): the entries or tiles served are not the ones the checkpoint commits to. Report it to the log's operator.")
        }
        return entries
    }

    /// The root of the tree of `treeSize`, from the new leaves' hashes and the tiles' stored hashes of the older ones.
    private func rootHash(
        of treeSize: UInt64, newLeavesFrom start: UInt64, newLeafHashes: [MerkleHash]
    ) async throws(LogMonitorError) -> MerkleHash {
        guard treeSize > 0 else { return TreeHasher.emptyTreeHash }
        var storedPositions = [MerkleNodePosition]()
        do {
            // A first pass with placeholder hashes only records which stored hashes the fold reads.
            _ = try Self.treeHash(of: 0..<treeSize, newLeavesFrom: start, newLeafHashes: newLeafHashes) { position in
                storedPositions.append(position)
                return TreeHasher.emptyTreeHash
            }
        } catch {
            throw LogMonitorError(.unreachable, "The hashes of a tree of \(treeSize) entries cannot be located: \(error)")
        }
        var reader = TileHashReader(treeSize: treeSize)
        if !storedPositions.isEmpty {
            let needed: [TileAddress]
            do {
                needed = try TileHashReader.tiles(holding: storedPositions, treeSize: treeSize)
            } catch {
                throw LogMonitorError(.unreachable, "The tiles of a tree of \(treeSize) entries cannot be located: \(error)")
            }
            guard needed.count <= maximumTileFetches else {
                throw LogMonitorError(.unreachable, "Checking the root of \(treeSize) entries needs \(needed.count) tiles, more than the \(maximumTileFetches) allowed.")
            }
            for tile in needed {
                let hashes = try await tiles.hashes(of: tile)
                do {
                    try reader.add(TileLayout.encode(hashes: hashes), of: tile)
                } catch {
                    throw LogMonitorError(.unreachable, "The log's tile \(tile.path) is malformed: \(error)")
                }
            }
        }
        do {
            let storedHashes = Dictionary(zip(storedPositions, try reader.hashes(at: storedPositions)), uniquingKeysWith: { first, _ in first })
            return try Self.treeHash(of: 0..<treeSize, newLeavesFrom: start, newLeafHashes: newLeafHashes) { position in
                guard let hash = storedHashes[position] else {
                    throw LogMonitorError(.unreachable, "No fetched tile holds the hash at \(position).")
                }
                return hash
            }
        } catch let error as LogMonitorError {
            throw error
        } catch {
            throw LogMonitorError(.unreachable, "The log's tiles do not hold the hashes of a tree of \(treeSize) entries: \(error)")
        }
    }

    /// The RFC 6962 Merkle Tree Hash of the leaves in `range`: folded from `newLeafHashes` (leaves from `start` on)
    /// where the range is new, read through `stored` where it is a perfect subtree of older leaves, split at the
    /// largest power of two otherwise.
    static func treeHash(
        of range: Range<UInt64>, newLeavesFrom start: UInt64, newLeafHashes: [MerkleHash],
        stored: (MerkleNodePosition) throws -> MerkleHash
    ) throws -> MerkleHash {
        if range.lowerBound >= start {
            return TreeHasher.treeHash(
                ofLeafHashes: Array(newLeafHashes[Int(range.lowerBound - start)..<Int(range.upperBound - start)]))
        }
        let width = UInt64(range.count)
        if range.upperBound <= start, width & (width - 1) == 0, range.lowerBound % width == 0 {
            return try stored(MerkleNodePosition(level: width.trailingZeroBitCount, index: range.lowerBound / width))
        }
        let split = range.lowerBound + (UInt64(1) << UInt64(63 - (width - 1).leadingZeroBitCount))
        return TreeHasher.nodeHash(
            left: try treeHash(of: range.lowerBound..<split, newLeavesFrom: start, newLeafHashes: newLeafHashes, stored: stored),
            right: try treeHash(of: split..<range.upperBound, newLeavesFrom: start, newLeafHashes: newLeafHashes, stored: stored))
    }

    private func tileAddress(_ kind: TileAddress.Kind, index: UInt64, width: Int) throws(LogMonitorError) -> TileAddress {
        do {
            return try TileAddress(kind: kind, index: index, width: width)
        } catch {
            throw LogMonitorError(.unreachable, "No tile \(kind) \(index) of width \(width): \(error)")
        }
    }
}
