import Crypto
import Foundation
import PinsetClient
import PinsetCore
import PinsetTransparency

/// A pin-set log that keeps its entries, not only their hashes, and publishes everything a monitor reads from the
/// log's base URL: the checkpoint, the hash tiles and the entry bundles.
struct TestEntryLog {
    static let base = URL(string: "https://trust.example.com/log/")!

    private(set) var hashes: TestPinSetLog
    private(set) var entries: [[UInt8]] = []

    init() throws {
        hashes = try TestPinSetLog(witnessCount: 0)
    }

    /// Another log under the same key holding `entries`: a fork, as only a holder of the log's key makes.
    init(reusingKeysOf log: TestEntryLog, entries: [[UInt8]]) {
        hashes = TestPinSetLog(reusingKeysOf: log.hashes, leaves: entries.map { TreeHasher.leafHash(ofEntry: $0) })
        self.entries = entries
    }

    var size: UInt64 { UInt64(entries.count) }

    /// The policy a monitor is given: the log's origin and verifier key.
    var policy: TransparencyPolicy {
        get throws { try hashes.clientPolicy(quorum: 0).policy }
    }

    static func entry(customer: String, version: Int64) throws -> [UInt8] {
        try PinSetLogEntry(
            customer: CustomerName(customer), version: version,
            contentSHA256: SHA256Fingerprint(of: Array("pins of \(customer) at \(version)".utf8))
        ).encoded()
    }

    mutating func append(customer: String, version: Int64) throws {
        append(entry: try Self.entry(customer: customer, version: version))
    }

    mutating func append(entry: [UInt8]) {
        entries.append(entry)
        hashes.append(entry: entry)
    }

    /// Appends one entry for each of `count` customers named `other<index>`.
    mutating func appendOthers(_ count: Int) throws {
        for _ in 0..<count {
            try append(customer: "other\(entries.count)", version: 1)
        }
    }

    /// The entry bundles of the tree of `size`, by path below the log's base.
    func entryBundles(size: UInt64? = nil) throws -> [String: [UInt8]] {
        var bundles: [String: [UInt8]] = [:]
        for bundle in TileLayout.entryBundles(forTreeSize: size ?? self.size) {
            let first = Int(bundle.index) * TileAddress.fullWidth
            bundles[bundle.path] = try EntryBundle.encode(Array(entries[first..<(first + bundle.width)]))
        }
        return bundles
    }

    /// Serves the log as it was at `size` (by default, now), its checkpoint signed by `signer` (by default, the log).
    func publish(on server: FakeTrustServer, size: UInt64? = nil, signer: Ed25519NoteSigner? = nil) throws {
        let size = size ?? self.size
        server.serveTiles(try hashes.tiles(size: size).merging(try entryBundles(size: size)) { tile, _ in tile }, base: Self.base)
        let note = try hashes.signedCheckpoint(size: size, cosignedBy: 0, signer: signer)
        server.serve(Array(note.encoded.utf8), at: Self.base.appendingPathComponent("checkpoint"))
    }
}
