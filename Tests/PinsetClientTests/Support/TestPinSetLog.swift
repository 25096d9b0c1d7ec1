import Crypto
import Foundation
import PinsetClient
import PinsetCore
import PinsetTransparency

/// A pin-set transparency log held in memory, with its key and witnesses generated per test: what a trust server's
/// log publishes (checkpoints, proofs, tiles), built with the same module the server uses.
struct TestPinSetLog: MerkleHashReader {
    static let origin = "trust.example.com/log"

    private(set) var leafHashes: [MerkleHash] = []
    let logSigner: Ed25519NoteSigner
    let witnesses: [Ed25519Cosigner]

    init(witnessCount: Int = 2) throws {
        logSigner = try Ed25519NoteSigner(keyName: Self.origin, privateKey: Curve25519.Signing.PrivateKey())
        witnesses = try (0..<witnessCount).map {
            try Ed25519Cosigner(keyName: "witness\($0).example", privateKey: Curve25519.Signing.PrivateKey())
        }
    }

    /// Another log under the same keys starting from `leaves`: a fork, as only a holder of the log's key makes.
    init(reusingKeysOf log: TestPinSetLog, leaves: [MerkleHash]) {
        logSigner = log.logSigner
        witnesses = log.witnesses
        leafHashes = leaves
    }

    var size: UInt64 { UInt64(leafHashes.count) }

    /// Appends the entry a client recomputes from `payload`; returns its index.
    @discardableResult
    mutating func append(_ payload: BundlePayload) throws -> UInt64 {
        append(entry: try PinSetLogEntry(payload: payload).encoded())
    }

    @discardableResult
    mutating func append(entry: [UInt8]) -> UInt64 {
        leafHashes.append(TreeHasher.leafHash(ofEntry: entry))
        return size - 1
    }

    /// Appends `count` entries of other customers' pin sets (they only need to be distinct leaves).
    mutating func appendOthers(_ count: Int) {
        for _ in 0..<count {
            append(entry: Array("pinset-pin-set-log-entry v1\ncustomer other\(leafHashes.count)\n".utf8))
        }
    }

    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        positions.map { TreeHasher.treeHash(ofLeafHashes: Array(leafHashes[Int($0.leafRange.lowerBound)..<Int($0.leafRange.upperBound)])) }
    }

    func checkpoint(size: UInt64? = nil) throws -> Checkpoint {
        let size = size ?? self.size
        return try Checkpoint(origin: Self.origin, treeSize: size, rootHash: TreeHead.compute(size: size, from: self).rootHash)
    }

    /// The checkpoint of `size` signed by `signer` (the log's key by default) and cosigned by the first `cosignedBy`
    /// witnesses.
    func signedCheckpoint(size: UInt64? = nil, cosignedBy count: Int = 2, signer: Ed25519NoteSigner? = nil) throws -> SignedNote {
        try signedNote(for: try checkpoint(size: size), cosignedBy: count, signer: signer)
    }

    /// `checkpoint` signed by the log's key (or `signer`) and cosigned by `count` witnesses, whatever tree it
    /// claims: what someone holding the log key can publish.
    func signedNote(for checkpoint: Checkpoint, cosignedBy count: Int = 2, signer: Ed25519NoteSigner? = nil) throws -> SignedNote {
        let cosignatures = try witnesses.prefix(count).map { try $0.cosign(checkpoint, timestamp: 1_800_000_000) }
        return try SignedNote(
            text: checkpoint.noteText, signatures: [(signer ?? logSigner).sign(noteText: checkpoint.noteText)] + cosignatures)
    }

    /// The tlog-proof body for entry `index` under `note` (a checkpoint of this log's tree of that size).
    func proof(index: UInt64, under note: SignedNote) throws -> [UInt8] {
        let size = try Checkpoint(noteText: note.text).treeSize
        let inclusion = try InclusionProof.generate(leafIndex: index, treeSize: size, from: self)
        return Array(try TransparencyProof(inclusion: inclusion, checkpointNote: note).encoded.utf8)
    }

    /// Every hash tile of the tree of `size`, by path below the log's prefix.
    func tiles(size: UInt64? = nil) throws -> [String: [UInt8]] {
        var tiles: [String: [UInt8]] = [:]
        for tile in TileLayout.hashTiles(forTreeSize: size ?? self.size) {
            tiles[tile.path] = try TileLayout.contents(of: tile, from: self)
        }
        return tiles
    }

    /// The policy an app builds from the vkeys it ships: this log's key and its witnesses'.
    func clientPolicy(quorum: Int = 2, tileBaseURL: URL? = nil) throws -> ClientTransparencyPolicy {
        try ClientTransparencyPolicy(
            origin: Self.origin, logKeys: [logSigner.verifierKey.encoded], witnessKeys: witnesses.map(\.verifierKey.encoded),
            quorum: quorum, tileBaseURL: tileBaseURL)
    }
}
