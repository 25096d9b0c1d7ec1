/// Which tiles and entry bundles a tree of a given size consists of, and their contents (c2sp.org/tlog-tiles).
///
/// A tree of size `s` has, at each tile level `l` while `s / 256^l > 0`, `floor(s / 256^(l+1))` full tiles and, if
/// `floor(s / 256^l) mod 256` is not zero, one partial tile of that width. Stateless and thread-safe.
public enum TileLayout {
    /// Every hash tile of a tree of `treeSize` leaves, level by level, full tiles before the partial one.
    public static func hashTiles(forTreeSize treeSize: UInt64) -> [TileAddress] {
        hashTiles(growingFrom: 0, to: treeSize)
    }

    /// Every entry bundle of a tree of `treeSize` leaves.
    public static func entryBundles(forTreeSize treeSize: UInt64) -> [TileAddress] {
        entryBundles(growingFrom: 0, to: treeSize)
    }

    /// The hash tiles to publish when the tree grows from `oldSize` to `newSize`: the full tiles completed in
    /// between and, per level, the partial tile of the new size if it differs from the one already published.
    public static func hashTiles(growingFrom oldSize: UInt64, to newSize: UInt64) -> [TileAddress] {
        guard oldSize <= newSize else { return [] }
        var tiles = [TileAddress]()
        var level = 0
        while level * TileAddress.height < 64, newSize >> UInt64(level * TileAddress.height) > 0 {
            let shift = UInt64(level * TileAddress.height)
            tiles += tilesAtOneLevel(kind: .hashes(level: level), oldCount: oldSize >> shift, newCount: newSize >> shift)
            level += 1
        }
        return tiles
    }

    /// The entry bundles to publish when the tree grows from `oldSize` to `newSize`.
    public static func entryBundles(growingFrom oldSize: UInt64, to newSize: UInt64) -> [TileAddress] {
        guard oldSize <= newSize else { return [] }
        return tilesAtOneLevel(kind: .entries, oldCount: oldSize, newCount: newSize)
    }

    /// `oldCount` and `newCount` are the numbers of hashes at this tile level before and after growth.
    private static func tilesAtOneLevel(kind: TileAddress.Kind, oldCount: UInt64, newCount: UInt64) -> [TileAddress] {
        let fullWidth = UInt64(TileAddress.fullWidth)
        var tiles = [TileAddress]()
        let firstNewFullTile = oldCount / fullWidth
        for index in firstNewFullTile..<(newCount / fullWidth) {
            tiles.append(tile(kind, index, TileAddress.fullWidth))
        }
        let partialWidth = Int(newCount % fullWidth)
        if partialWidth > 0, newCount != oldCount {
            tiles.append(tile(kind, newCount / fullWidth, partialWidth))
        }
        return tiles
    }

    private static func tile(_ kind: TileAddress.Kind, _ index: UInt64, _ width: Int) -> TileAddress {
        // Widths and levels computed above are always in range.
        guard let tile = try? TileAddress(kind: kind, index: index, width: width) else {
            preconditionFailure("tile \(kind) \(index) width \(width) out of range")
        }
        return tile
    }

    /// The stored hashes a hash tile consists of, in order; each is a perfect subtree at Merkle level `8 × level`.
    public static func positions(of tile: TileAddress) throws -> [MerkleNodePosition] {
        guard case .hashes(let level) = tile.kind else {
            throw TransparencyError(.invalidArgument, "Entry bundles hold entries, not stored hashes.")
        }
        let merkleLevel = level * TileAddress.height
        guard merkleLevel <= 63 else {
            throw TransparencyError(.invalidArgument, "Tile level \(level) lies above any tree of 2^63 leaves.")
        }
        let first = tile.index.multipliedReportingOverflow(by: UInt64(TileAddress.fullWidth))
        guard !first.overflow else {
            throw TransparencyError(.invalidArgument, "Tile \(tile.path) lies beyond 2^64 nodes.")
        }
        return try (0..<UInt64(tile.width)).map { offset in
            try MerkleNodePosition(level: merkleLevel, index: first.partialValue + offset)
        }
    }

    /// The bytes of a hash tile: its hashes concatenated, 32 bytes each.
    public static func contents(of tile: TileAddress, from reader: some MerkleHashReader) throws -> [UInt8] {
        let positions = try positions(of: tile)
        return try encode(hashes: checked(reader.hashes(at: positions), count: positions.count))
    }

    public static func contents(of tile: TileAddress, from reader: some AsyncMerkleHashReader) async throws -> [UInt8] {
        let positions = try positions(of: tile)
        return try await encode(hashes: checked(reader.hashes(at: positions), count: positions.count))
    }

    private static func checked(_ hashes: [MerkleHash], count: Int) throws -> [MerkleHash] {
        guard hashes.count == count else {
            throw TransparencyError(.hashReaderMismatch, "Asked for \(count) stored hashes, got \(hashes.count).")
        }
        return hashes
    }

    public static func encode(hashes: [MerkleHash]) -> [UInt8] {
        hashes.flatMap(\.bytes)
    }

    /// Splits fetched tile bytes into hashes, refusing anything but exactly `tile.width` hashes.
    public static func hashes(inContents contents: [UInt8], of tile: TileAddress) throws -> [MerkleHash] {
        guard case .hashes = tile.kind else {
            throw TransparencyError(.malformedTile, "\(tile.path) is an entry bundle, not a hash tile.")
        }
        guard contents.count == tile.width * MerkleHash.byteCount else {
            throw TransparencyError(
                .malformedTile,
                "\(tile.path) must be \(tile.width * MerkleHash.byteCount) bytes; got \(contents.count).")
        }
        return stride(from: 0, to: contents.count, by: MerkleHash.byteCount).map {
            MerkleHash(trustedBytes: Array(contents[$0..<($0 + MerkleHash.byteCount)]))
        }
    }
}
