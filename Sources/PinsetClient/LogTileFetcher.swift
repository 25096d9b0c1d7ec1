import Foundation
import PinsetCore
import PinsetTransparency

/// Fetches the log's hash tiles and entry bundles for a monitor, each under the size its width allows.
///
/// Tiles are untrusted input: this type checks their shape only (exactly `width` hashes or entries); whether
/// they are the log's is decided by comparing what they give with a signed root.
struct LogTileFetcher: Sendable {
    let downloader: TransparencyDownloader
    /// The URL tile paths (`tile/0/000`) are resolved against; ends in `/`.
    let logBase: URL

    /// The first `tile.width` hashes of the hash tile `tile`.
    func hashes(of tile: TileAddress) async throws(LogMonitorError) -> [MerkleHash] {
        let (address, body) = try await fetch(tile, maximumSizePerItem: MerkleHash.byteCount)
        do {
            return Array(try TileLayout.hashes(inContents: body, of: address).prefix(tile.width))
        } catch {
            throw LogMonitorError(.unreachable, "The log's tile \(address.path) at \(url(of: address)) is malformed: \(error)")
        }
    }

    /// The first `bundle.width` entries of the entry bundle `bundle`.
    func entries(of bundle: TileAddress) async throws(LogMonitorError) -> [[UInt8]] {
        // A Pinset log holds only pin-set entries; a bundle with longer ones is refused before it is read whole.
        let (address, body) = try await fetch(bundle, maximumSizePerItem: 2 + PinSetLogEntry.maximumEncodedSize)
        do {
            return Array(try EntryBundle.decode(body, at: address).prefix(bundle.width))
        } catch {
            throw LogMonitorError(.unreachable, "The log's entry bundle \(address.path) at \(url(of: address)) is malformed: \(error)")
        }
    }

    /// The tile itself, or the full tile of the same index once the log has deleted the partial one (tlog-tiles).
    private func fetch(_ tile: TileAddress, maximumSizePerItem: Int) async throws(LogMonitorError) -> (TileAddress, [UInt8]) {
        let response = try await get(tile, maximumSize: tile.width * maximumSizePerItem)
        if response.statusCode == 200 { return (tile, response.body) }
        guard response.statusCode == 404, tile.isPartial,
              let full = try? TileAddress(kind: tile.kind, index: tile.index, width: TileAddress.fullWidth) else {
            throw LogMonitorError(.unreachable, "The log answered \(response.statusCode) for \(tile.path) at \(url(of: tile)); is --log-url the log's base URL?")
        }
        let fullResponse = try await get(full, maximumSize: full.width * maximumSizePerItem)
        guard fullResponse.statusCode == 200 else {
            throw LogMonitorError(.unreachable, "The log answered 404 for \(tile.path) and \(fullResponse.statusCode) for \(full.path) at \(url(of: full)).")
        }
        return (full, fullResponse.body)
    }

    private func get(_ tile: TileAddress, maximumSize: Int) async throws(LogMonitorError) -> FetchedBundle {
        do {
            return try await downloader.fetch(url(of: tile), maximumSize: maximumSize, refusal: .tilesUnavailable, what: tile.path)
        } catch {
            throw LogMonitorError(.unreachable, error.reason)
        }
    }

    func url(of tile: TileAddress) -> URL {
        URL(string: tile.path, relativeTo: logBase)?.absoluteURL ?? logBase.appendingPathComponent(tile.path)
    }
}
