/// Stored Merkle hashes read from fetched hash tiles (c2sp.org/tlog-tiles), for a verifier that holds no store.
///
/// A client that must check a consistency proof itself plans the proof (``ConsistencyProof/plan(oldSize:newSize:)``),
/// asks ``tiles(holding:treeSize:)`` which tiles hold the planned hashes, fetches exactly those, adds them here and
/// generates the proof from this reader. A node whose level is not a multiple of eight is folded from the hashes of
/// the tile level below it, as Go's `sumdb/tlog.HashFromTile` does.
///
/// The tiles are untrusted input: a wrong hash only yields a proof that fails to verify against the two signed
/// roots, so this type checks shape (width, length, which tile) and never meaning. A full tile may stand in for a
/// partial one of the same index, as tlog-tiles lets a log delete partial tiles once the full one exists.
public struct TileHashReader: MerkleHashReader, Sendable {
    private struct TileKey: Hashable {
        let level: Int
        let index: UInt64
    }

    public let treeSize: UInt64
    private var tileHashes: [TileKey: [MerkleHash]] = [:]

    public init(treeSize: UInt64) {
        self.treeSize = treeSize
    }

    /// The hash tiles of the tree of `treeSize` leaves that hold `positions`, each once, at the width the tree has.
    public static func tiles(holding positions: [MerkleNodePosition], treeSize: UInt64) throws -> [TileAddress] {
        var seen = Set<TileKey>()
        var tiles = [TileAddress]()
        for position in positions {
            let (key, _) = try location(of: position, treeSize: treeSize)
            guard seen.insert(key).inserted else { continue }
            let hashesAtLevel = treeSize >> UInt64(key.level * TileAddress.height)
            let start = key.index * UInt64(TileAddress.fullWidth)
            let width = Int(min(UInt64(TileAddress.fullWidth), hashesAtLevel - start))
            tiles.append(try TileAddress(kind: .hashes(level: key.level), index: key.index, width: width))
        }
        return tiles
    }

    /// Adds a fetched tile's contents; throws ``TransparencyError/Code/malformedTile`` unless they are exactly
    /// `tile.width` hashes.
    public mutating func add(_ contents: [UInt8], of tile: TileAddress) throws {
        guard case .hashes(let level) = tile.kind else {
            throw TransparencyError(.malformedTile, "\(tile.path) is an entry bundle, not a hash tile.")
        }
        tileHashes[TileKey(level: level, index: tile.index)] = try TileLayout.hashes(inContents: contents, of: tile)
    }

    public func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        try positions.map { position in
            let (key, range) = try Self.location(of: position, treeSize: treeSize)
            guard let hashes = tileHashes[key], range.upperBound <= hashes.count else {
                throw TransparencyError(
                    .hashReaderMismatch, "No fetched tile holds the hash at \(position) of a tree of \(treeSize).")
            }
            return TreeHasher.treeHash(ofLeafHashes: Array(hashes[range]))
        }
    }

    /// The tile holding the hashes `position` is folded from, and their offsets within it.
    private static func location(
        of position: MerkleNodePosition, treeSize: UInt64
    ) throws -> (tile: TileKey, offsets: Range<Int>) {
        guard position.leafRange.upperBound <= treeSize else {
            throw TransparencyError(.invalidArgument, "\(position) lies outside a tree of \(treeSize) leaves.")
        }
        let tileLevel = position.level / TileAddress.height
        let levelsInsideTile = position.level - tileLevel * TileAddress.height
        // The hashes one tile level down that make up this node: 2^levelsInsideTile of them, aligned, in one tile.
        let first = position.index << UInt64(levelsInsideTile)
        let count = 1 << levelsInsideTile
        let offset = Int(first % UInt64(TileAddress.fullWidth))
        return (TileKey(level: tileLevel, index: first / UInt64(TileAddress.fullWidth)), offset..<(offset + count))
    }
}
