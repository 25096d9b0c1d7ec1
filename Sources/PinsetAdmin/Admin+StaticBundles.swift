import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetLogPublishing
import PinsetPublishing
import PinsetSigning
import PinsetTransparency

extension Admin {
    /// Signs every customer's bundle, as the server does, into `directory` for a web server or CDN to serve.
    ///
    /// Each `<customer>.json.signed` is replaced atomically, so a reader never sees a partial file; a customer
    /// that cannot be signed keeps its previous file (the result names it). When nothing at all can be signed
    /// (typically an unusable default key), the directory is left untouched. With `prune`, files of customers
    /// that no longer exist are deleted.
    ///
    /// With `transparencyLog`, the log is published beside the bundles as the server serves it: `log/checkpoint`
    /// signed by the log key, `log/tile/…` and each `<customer>.json.proof`. They are written before the bundles, so
    /// a CDN that copies the directory while this runs never publishes a bundle without its proof; full tiles,
    /// which never change, are written only once.
    ///
    /// - Parameters:
    ///   - key: the default signing key, in place of the data directory's.
    ///   - certificate: the default signing certificate, in place of the data directory's.
    public func writeSignedBundles(
        to directory: String, bundleLifetime: Int64, key: String? = nil, certificate: String? = nil, prune: Bool = false,
        transparencyLog: (origin: String, signer: Ed25519NoteSigner)? = nil, now: Date = Date()
    ) throws -> SigningPassResult {
        var locations = dataDirectory.signingIdentityLocations
        if let key { locations.defaultKeyPath = key }
        if let certificate { locations.defaultCertificatePath = certificate }
        // Like the server's pass: pins whose publish window began or ended by `now` enter or leave first. Without a
        // monitor there is no chain seen served to hold a leaving pin for (docs/review.md, "Publish windows").
        try store.applyPinWindows(at: now)
        // A report-only window whose end has passed is ended first (a change of its own), so these bundles
        // no longer announce it; with static hosting, the window lasts until the next run after its end.
        try store.endReportOnlyWindows(endingBy: now)
        let pinSets = try store.allPinSets()
        let result = SigningPass(identities: SigningIdentityDirectory(locations: locations), bundleLifetime: bundleLifetime).run(pinSets, now: now)
        if result.bundles.isEmpty && !result.failures.isEmpty {
            throw AdminError(lines: ["Nothing was signed; \(directory) is left as it was:"] + result.failures.map { "  \($0)" })
        }
        try AtomicFile.createDirectory(directory)
        // A run killed mid-write leaves a hidden temporary file; never let a CDN sync publish it.
        AtomicFile.removeAbandonedTemporaryFiles(in: directory)
        if let transparencyLog {
            // Read after the pin sets: every version they carry was logged in the transaction that made it.
            // The checkpoint the directory serves now: the log signed here must extend it.
            let served = PublishedCheckpointFile(path: "\(directory)/log/checkpoint")
            let publisher = try TransparencyLogPublisher(
                origin: transparencyLog.origin, signer: transparencyLog.signer, source: store, publishedBefore: try served.load())
            try publisher.advance()
            try Self.writeLog(of: publisher, proving: result.bundles, to: directory)
        }
        for bundle in result.bundles {
            try AtomicFile.write(try bundle.bytes, to: "\(directory)/\(bundle.customer.bundleFileName)", mode: 0o644)
        }
        if prune {
            let keep = Set(pinSets.map(\.customer.bundleFileName))
            for name in try FileManager.default.contentsOfDirectory(atPath: directory)
            where name.hasSuffix(".json.signed") && !keep.contains(name) && CustomerName(bundlePath: "/" + name[...]) != nil {
                try FileManager.default.removeItem(atPath: "\(directory)/\(name)")
            }
        }
        return result
    }

    /// The tiles, entry bundles, proofs and checkpoint of `publisher`'s checkpoint, in that order.
    private static func writeLog(of publisher: TransparencyLogPublisher, proving bundles: [SignedBundle], to directory: String) throws {
        guard let checkpoint = publisher.checkpoint else {
            throw AdminError("The transparency log has no checkpoint to publish.")
        }
        let size = checkpoint.checkpoint.treeSize
        for tile in TileLayout.hashTiles(forTreeSize: size) + TileLayout.entryBundles(forTreeSize: size) {
            let path = "\(directory)/log/\(tile.path)"
            if !tile.isPartial && AtomicFile.exists(path) { continue }
            guard let contents = try publisher.tile(tile) else {
                throw AdminError("The transparency log has no \(tile.path) under its checkpoint of \(size) entries.")
            }
            try AtomicFile.createDirectory(String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]))
            try AtomicFile.write(contents, to: path, mode: 0o644)
        }
        for bundle in bundles {
            guard let proof = try publisher.proof(for: bundle.customer, version: bundle.version) else {
                throw AdminError("Customer '\(bundle.customer)' version \(bundle.version) is not in the transparency log, so no bundle is written. The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
            }
            try AtomicFile.write(proof, to: "\(directory)/\(bundle.customer.proofFileName)", mode: 0o644)
        }
        try AtomicFile.write(checkpoint.encoded, to: "\(directory)/log/checkpoint", mode: 0o644)
    }
}
