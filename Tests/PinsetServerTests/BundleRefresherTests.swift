import Foundation
import Logging
import PinsetCore
import PinsetServer
import PinsetSigning
import PinsetTestSupport
import Testing

/// A pin-set source whose content and failures the test controls.
final class ScriptedSource: PinSetSource, @unchecked Sendable {
    private let lock = NSLock()
    private var pinSets: [PinSet]
    private var counter: Int64 = 1
    private var failure: (any Error)?

    init(_ pinSets: [PinSet]) {
        self.pinSets = pinSets
    }

    func set(_ pinSets: [PinSet]) {
        lock.withLock {
            self.pinSets = pinSets
            counter += 1
        }
    }

    func fail(with error: (any Error)?) {
        lock.withLock { failure = error }
    }

    func allPinSets() throws -> [PinSet] {
        try lock.withLock {
            if let failure { throw failure }
            return pinSets
        }
    }

    func changeCounter() throws -> Int64 {
        lock.withLock { counter }
    }
}

struct StoreUnavailable: Error {}

struct BundleRefresherTests {
    static func pinSet(_ name: String, version: Int64) throws -> PinSet {
        let pin = Pin(spkiSHA256: SHA256Fingerprint(of: Array(name.utf8)), source: PinSource(kind: .hash))
        return PinSet(customer: try CustomerName(name), version: version, hosts: [HostPins(hostname: try Hostname("\(name).example.com"), pins: [pin])])
    }

    static func makeRefresher(source: ScriptedSource, cache: BundleCache, metrics: ServerMetrics? = nil) throws -> BundleRefresher {
        BundleRefresher(
            source: source,
            pass: SigningPass(signer: BundleSigner(identity: try TestPKI.signingIdentity()), bundleLifetime: 3600),
            cache: cache,
            metrics: metrics,
            logger: Logger(label: "test"),
            resignInterval: 300,
            changePollInterval: 0.05
        )
    }

    @Test func keepsTheLastGoodBundlesWhenSigningFails() throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1)])
        let cache = BundleCache()
        let metrics = ServerMetrics()
        let refresher = try Self.makeRefresher(source: source, cache: cache, metrics: metrics)
        #expect(refresher.refreshNow(reason: "test"))
        let good = try #require(cache.bundle(for: try CustomerName("acme")))

        source.fail(with: StoreUnavailable())
        #expect(!refresher.refreshNow(reason: "test"))
        #expect(cache.bundle(for: try CustomerName("acme"))?.bytes == good.bytes)
        #expect(refresher.status.consecutiveFailures == 1)
        #expect(refresher.status.lastError?.contains("StoreUnavailable") == true)
        let text = String(decoding: metrics.registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains("pinset_signing_failures_total 1"))

        source.fail(with: nil)
        #expect(refresher.refreshNow(reason: "test"))
        #expect(refresher.status.consecutiveFailures == 0)
    }

    @Test func picksUpChangesWithoutWaitingForTheInterval() async throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1)])
        let cache = BundleCache()
        let refresher = try Self.makeRefresher(source: source, cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        source.set([try Self.pinSet("acme", version: 2), try Self.pinSet("globex", version: 1)])
        var picked = false
        for _ in 0..<100 where !picked {
            picked = cache.bundle(for: try CustomerName("globex")) != nil
            if !picked { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(picked)
        #expect(cache.bundle(for: try CustomerName("acme"))?.version == 2)
    }

    @Test func removedCustomersDisappearFromTheCache() throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1), try Self.pinSet("globex", version: 1)])
        let cache = BundleCache()
        let refresher = try Self.makeRefresher(source: source, cache: cache)
        #expect(refresher.refreshNow(reason: "test"))
        source.set([try Self.pinSet("acme", version: 1)])
        #expect(refresher.refreshNow(reason: "test"))
        #expect(cache.bundle(for: try CustomerName("globex")) == nil)
    }
}
