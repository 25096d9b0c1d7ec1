import Foundation
import PinsetCore
import PinsetPublishing
import PinsetServer
import PinsetTestSupport
import Testing

/// Moving served bundles between files changes where their bytes are read from, nothing else: never which bundle a
/// customer is served, or whether it is served at all.
struct BundleCacheRelocationTests {
    @Test func relocationReplacesOnlyTheSameBundleStillServed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let acme = try CustomerName("acme"), globex = try CustomerName("globex"), initech = try CustomerName("initech")
        func bundle(_ customer: CustomerName, _ byte: UInt8, at timestamp: Int64) -> SignedBundle {
            SignedBundle(customer: customer, bytes: [UInt8](repeating: byte, count: 64), version: 1, timestamp: timestamp, expires: timestamp + 3600)
        }
        let cache = BundleCache()
        let original = [bundle(acme, 1, at: 100), bundle(globex, 2, at: 100), bundle(initech, 3, at: 100)]
        cache.replace(with: original, signedAt: 100)
        let moved = try BundleSpool(directory: directory.path).store(original).bundles

        // While they were copied: globex re-signed, initech removed.
        let resigned = bundle(globex, 9, at: 101)
        cache.merge([resigned], failures: [])
        cache.finishPass(customers: [acme, globex], failures: [], passTime: 101)
        cache.relocate(moved)

        #expect(cache.bundle(for: acme)?.file === moved[0].file)
        #expect(try cache.bundle(for: acme)?.bytes == original[0].bytes)
        #expect(cache.bundle(for: globex)?.file == nil && cache.bundle(for: globex)?.etag == resigned.etag)
        #expect(cache.bundle(for: initech) == nil)
        #expect(cache.snapshot.bundles.count == 2)
    }
}
