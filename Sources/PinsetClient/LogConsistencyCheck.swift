import Foundation
import PinsetTransparency

/// Proves, from the log's hash tiles, that a newly verified checkpoint extends the one the client held.
///
/// The client computes the RFC 9162 consistency proof itself: it plans the hashes the proof needs, fetches only the
/// tiles holding them (`TileHashReader`), folds the proof and verifies it between the two signed roots. The tiles
/// are untrusted: wrong tiles only make the proof fail. A failing proof is refused as a fork, since a correct log
/// serving correct tiles always passes; tiles that cannot be fetched are refused too (fail closed), since without
/// them a split view cannot be ruled out.
struct LogConsistencyCheck: Sendable {
    let downloader: TransparencyDownloader
    /// The URL the tile paths (`tile/0/000`) are resolved against; ends in `/`.
    let tileBase: URL
    let maximumTileFetches: Int

    func verify(from held: Checkpoint, to new: Checkpoint) async throws(PinUpdateError) {
        let plan: MerkleHashPlan
        let tiles: [TileAddress]
        do {
            plan = try ConsistencyProof.plan(oldSize: held.treeSize, newSize: new.treeSize)
            tiles = try TileHashReader.tiles(holding: plan.positions, treeSize: new.treeSize)
        } catch {
            throw LogInclusionCheck.refusal(.logFork, "no consistency proof exists from \(held.treeSize) to \(new.treeSize) entries: \(error)")
        }
        guard tiles.count <= maximumTileFetches else {
            throw LogInclusionCheck.refusal(
                .tilesUnavailable,
                "proving \(held.treeSize) → \(new.treeSize) entries needs \(tiles.count) tiles, more than the \(maximumTileFetches) allowed")
        }
        var reader = TileHashReader(treeSize: new.treeSize)
        for tile in tiles {
            let (address, contents) = try await fetch(tile)
            do {
                try reader.add(contents, of: address)
            } catch {
                throw LogInclusionCheck.refusal(.tilesUnavailable, "the log's tile \(address.path) is malformed: \(error)")
            }
        }
        let proof: ConsistencyProof
        do {
            proof = try ConsistencyProof(oldSize: held.treeSize, newSize: new.treeSize, path: plan.read(from: reader))
        } catch {
            throw LogInclusionCheck.refusal(.tilesUnavailable, "the log's tiles do not hold the hashes of a consistency proof: \(error)")
        }
        do {
            try proof.verify(oldRoot: held.rootHash, newRoot: new.rootHash)
        } catch {
            throw LogInclusionCheck.refusal(
                .logFork,
                "the log's checkpoint of \(new.treeSize) entries does not extend the one of \(held.treeSize) this client verified before (\(error)): the log shows different histories (a split view), or its tiles are wrong. Report it to the log's operator and witnesses.")
        }
    }

    /// A partial tile, or the full tile of the same index once the log has deleted the partial one (tlog-tiles).
    private func fetch(_ tile: TileAddress) async throws(PinUpdateError) -> (TileAddress, [UInt8]) {
        let response = try await downloader.fetch(
            url(of: tile), maximumSize: tile.width * MerkleHash.byteCount, refusal: .tilesUnavailable, what: "tile \(tile.path)")
        if response.statusCode == 200 { return (tile, response.body) }
        guard response.statusCode == 404, tile.isPartial,
              let full = try? TileAddress(kind: tile.kind, index: tile.index, width: TileAddress.fullWidth) else {
            throw LogInclusionCheck.refusal(
                .tilesUnavailable, "the server answered \(response.statusCode) for tile \(tile.path) at \(url(of: tile))")
        }
        let body = try await downloader.body(
            url(of: full), maximumSize: full.width * MerkleHash.byteCount, refusal: .tilesUnavailable, what: "tile \(full.path)")
        return (full, body)
    }

    private func url(of tile: TileAddress) -> URL {
        URL(string: tile.path, relativeTo: tileBase)?.absoluteURL ?? tileBase.appendingPathComponent(tile.path)
    }
}
