import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetPublishing
import PinsetSigning

extension Admin {
    /// Signs every customer's bundle, as the server does, into `directory` for a web server or CDN to serve.
    ///
    /// Each `<customer>.json.signed` is replaced atomically, so a reader never sees a partial file; a customer
    /// that cannot be signed keeps its previous file (the result names it). When nothing at all can be signed
    /// (typically an unusable default key), the directory is left untouched. With `prune`, files of customers
    /// that no longer exist are deleted.
    ///
    /// - Parameters:
    ///   - key: the default signing key, in place of the data directory's.
    ///   - certificate: the default signing certificate, in place of the data directory's.
    public func writeSignedBundles(
        to directory: String, bundleLifetime: Int64, key: String? = nil, certificate: String? = nil, prune: Bool = false,
        now: Date = Date()
    ) throws -> SigningPassResult {
        var locations = dataDirectory.signingIdentityLocations
        if let key { locations.defaultKeyPath = key }
        if let certificate { locations.defaultCertificatePath = certificate }
        let pinSets = try store.allPinSets()
        let result = SigningPass(identities: SigningIdentityDirectory(locations: locations), bundleLifetime: bundleLifetime).run(pinSets, now: now)
        if result.bundles.isEmpty && !result.failures.isEmpty {
            throw AdminError("Nothing was signed; \(directory) is left as it was:\n" + result.failures.map { "  \($0)" }.joined(separator: "\n"))
        }
        try AtomicFile.createDirectory(directory)
        // A run killed mid-write leaves a hidden temporary file; never let a CDN sync publish it.
        AtomicFile.removeAbandonedTemporaryFiles(in: directory)
        for bundle in result.bundles {
            try AtomicFile.write(bundle.bytes, to: "\(directory)/\(bundle.customer.bundleFileName)", mode: 0o644)
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
}
