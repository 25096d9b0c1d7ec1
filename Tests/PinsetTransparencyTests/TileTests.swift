import PinsetTransparency
import Testing

struct TileTests {
    @Test(arguments: [
        (TileAddress.Kind.hashes(level: 0), UInt64(0), 256, "tile/0/000"),
        (.hashes(level: 0), 5, 256, "tile/0/005"),
        (.hashes(level: 1), 999, 256, "tile/1/999"),
        (.hashes(level: 2), 1000, 256, "tile/2/x001/000"),
        (.hashes(level: 0), 1_234_067, 256, "tile/0/x001/x234/067"),
        (.hashes(level: 3), 1_234_067, 17, "tile/3/x001/x234/067.p/17"),
        (.hashes(level: 63), 0, 1, "tile/63/000.p/1"),
        (.entries, 273, 112, "tile/entries/273.p/112"),
        (.entries, 1_000_000, 256, "tile/entries/x001/x000/000"),
        (.entries, UInt64.max, 256, "tile/entries/x018/x446/x744/x073/x709/x551/615"),
    ])
    func pathsFollowTheSpecificationAndParseBack(kind: TileAddress.Kind, index: UInt64, width: Int, path: String) throws {
        let tile = try TileAddress(kind: kind, index: index, width: width)
        #expect(tile.path == path)
        #expect(try TileAddress(path: path) == tile)
    }

    @Test(arguments: [
        "", "tile", "tile/0", "tiles/0/000", "/tile/0/000", "tile/0/000/", "tile//000", "tile/00/000", "tile/+1/000",
        "tile/64/000", "tile/-1/000", "tile/0/0", "tile/0/0000", "tile/0/x000", "tile/0/x000/005", "tile/0/001/002",
        "tile/0/x1/002", "tile/0/xx01/002", "tile/0/000.p/256", "tile/0/000.p/0", "tile/0/000.p/", "tile/0/000.p/01",
        "tile/0/000.p", "tile/0/000.p/1/2", "tile/0/.p/1", "tile/data/000", "tile/Entries/000", "tile/0/00a",
        "tile/0/x018/x446/x744/x073/x709/x551/616", "tile/0/x999/x999/x999/x999/x999/x999/x999/999", "tile/0/../000",
    ])
    func malformedPathsAreRefused(path: String) {
        #expect(throws: TransparencyError(.malformedTilePath, "")) { try TileAddress(path: path) }
    }

    @Test func aTreeOf70000HasTheTilesTheSpecificationLists() {
        // tlog-tiles: 273 full level-0 tiles, a partial level-0 tile of width 112, one full level-1 tile, a partial
        // level-1 tile of width 17, and a partial level-2 tile of width 1.
        let tiles = TileLayout.hashTiles(forTreeSize: 70_000)
        let level0 = tiles.filter { $0.kind == .hashes(level: 0) }
        #expect(level0.filter { !$0.isPartial }.count == 273)
        #expect(level0.filter(\.isPartial).map(\.width) == [112])
        #expect(tiles.filter { $0.kind == .hashes(level: 1) }.map(\.width) == [256, 17])
        #expect(tiles.filter { $0.kind == .hashes(level: 2) }.map(\.width) == [1])
        #expect(tiles.count == 273 + 1 + 2 + 1)
        #expect(TileLayout.entryBundles(forTreeSize: 70_000).map(\.width) == Array(repeating: 256, count: 273) + [112])
    }

    @Test func aTreeOf256HasAFullTileAndAPartialLevel1Tile() {
        #expect(TileLayout.hashTiles(forTreeSize: 256).map(\.path) == ["tile/0/000", "tile/1/000.p/1"])
        #expect(TileLayout.hashTiles(forTreeSize: 0).isEmpty)
        #expect(TileLayout.hashTiles(forTreeSize: 1).map(\.path) == ["tile/0/000.p/1"])
    }

    @Test func growingPublishesCompletedTilesAndTheNewPartialOnes() {
        #expect(TileLayout.hashTiles(growingFrom: 200, to: 600).map(\.path)
            == ["tile/0/000", "tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2"])
        #expect(TileLayout.hashTiles(growingFrom: 600, to: 600).isEmpty)
        #expect(TileLayout.hashTiles(growingFrom: 600, to: 601).map(\.path) == ["tile/0/002.p/89"])
        // Level 1 keeps width 2 from 512 to 767: no new level-1 tile until 768.
        #expect(TileLayout.hashTiles(growingFrom: 600, to: 768).map(\.path) == ["tile/0/002", "tile/1/000.p/3"])
        #expect(TileLayout.entryBundles(growingFrom: 200, to: 600).map(\.path)
            == ["tile/entries/000", "tile/entries/001", "tile/entries/002.p/88"])
        // Every tile of the new tree is published at some step or was before.
        var published = Set<String>()
        var size: UInt64 = 0
        for next in [1, 255, 256, 257, 511, 70_000, 70_001, 131_072] as [UInt64] {
            published.formUnion(TileLayout.hashTiles(growingFrom: size, to: next).map(\.path))
            size = next
            #expect(Set(TileLayout.hashTiles(forTreeSize: size).map(\.path)).isSubset(of: published))
        }
    }

    @Test func tileContentsAreTheStoredHashesAndALevel1HashIsTheRootOfAFullTile() throws {
        let log = InMemoryLog(entryCount: 600)
        let leaves = log.entries.map(ReferenceMerkle.leaf)
        let partial = try TileAddress(kind: .hashes(level: 0), index: 2, width: 88)
        let contents = try TileLayout.contents(of: partial, from: log)
        #expect(contents == leaves[512..<600].flatMap(\.bytes))
        #expect(try TileLayout.hashes(inContents: contents, of: partial) == Array(leaves[512..<600]))

        let full = try TileAddress(kind: .hashes(level: 0), index: 1)
        let level1 = try TileAddress(kind: .hashes(level: 1), index: 0, width: 2)
        let level1Hashes = try TileLayout.hashes(inContents: TileLayout.contents(of: level1, from: log), of: level1)
        #expect(level1Hashes[1] == ReferenceMerkle.mth(leaves[256..<512]))
        #expect(level1Hashes[1] == TreeHasher.treeHash(ofLeafHashes: try TileLayout.hashes(inContents: TileLayout.contents(of: full, from: log), of: full)))
    }

    @Test func tileContentsOfTheWrongSizeAreRefused() throws {
        let tile = try TileAddress(kind: .hashes(level: 0), index: 0, width: 3)
        #expect(throws: TransparencyError(.malformedTile, "")) { try TileLayout.hashes(inContents: [UInt8](repeating: 0, count: 95), of: tile) }
        #expect(throws: TransparencyError(.malformedTile, "")) { try TileLayout.hashes(inContents: [UInt8](repeating: 0, count: 128), of: tile) }
        let bundle = try TileAddress(kind: .entries, index: 0, width: 3)
        #expect(throws: TransparencyError(.malformedTile, "")) { try TileLayout.hashes(inContents: [UInt8](repeating: 0, count: 96), of: bundle) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try TileLayout.positions(of: bundle) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try TileLayout.positions(of: TileAddress(kind: .hashes(level: 8), index: 0)) }
    }

    @Test func entryBundlesAreLengthPrefixedBigEndian() throws {
        let entries: [[UInt8]] = [[], [0x41], [UInt8](repeating: 7, count: 300)]
        let bundle = try EntryBundle.encode(entries)
        #expect(Array(bundle[0..<2]) == [0, 0])
        #expect(Array(bundle[2..<5]) == [0, 1, 0x41])
        #expect(Array(bundle[5..<7]) == [0x01, 0x2C])
        #expect(bundle.count == 2 + 3 + 2 + 300)
        #expect(try EntryBundle.decode(bundle) == entries)
        let address = try TileAddress(kind: .entries, index: 0, width: 3)
        #expect(try EntryBundle.decode(bundle, at: address) == entries)
        // Entries hash to the level-0 tile's hashes.
        #expect(entries.map { TreeHasher.leafHash(ofEntry: $0) } == entries.map(ReferenceMerkle.leaf))
    }

    @Test func malformedEntryBundlesAreRefused() throws {
        let bundle = try EntryBundle.encode([[1, 2, 3], [4]])
        #expect(throws: TransparencyError(.malformedEntryBundle, "")) { try EntryBundle.decode(Array(bundle.dropLast())) }
        #expect(throws: TransparencyError(.malformedEntryBundle, "")) { try EntryBundle.decode(bundle + [0]) }
        #expect(throws: TransparencyError(.malformedEntryBundle, "")) { try EntryBundle.decode([0, 5, 1]) }
        #expect(throws: TransparencyError(.malformedEntryBundle, "")) {
            try EntryBundle.decode(bundle, at: TileAddress(kind: .entries, index: 0, width: 3))
        }
        #expect(throws: TransparencyError(.malformedEntryBundle, "")) {
            try EntryBundle.decode(bundle, at: TileAddress(kind: .hashes(level: 0), index: 0, width: 2))
        }
        #expect(throws: TransparencyError(.malformedEntryBundle, "")) {
            try EntryBundle.decode([UInt8](repeating: 0, count: 2 * 257))
        }
        #expect(throws: TransparencyError(.entryTooLarge, "")) { try EntryBundle.encode([[UInt8](repeating: 0, count: 65_536)]) }
        #expect(throws: TransparencyError(.invalidArgument, "")) { try EntryBundle.encode(Array(repeating: [1], count: 257)) }
    }
}
