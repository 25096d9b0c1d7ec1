import Foundation
import Logging
import PinsetCore
import PinsetPublishing
import PinsetServer
import PinsetSigning
import PinsetStore
import PinsetTestSupport
import Testing

/// A pin-set source whose content and failures the test controls.
final class ScriptedSource: PinSetSource, @unchecked Sendable {
    private let lock = NSLock()
    private var pinSets: [PinSet]
    private var counter: Int64 = 1
    private var failure: (any Error)?
    private var pinSetsFailure: (any Error)?
    private var pinSetReads = 0
    private var updateRequests: [[PinSetHeader]] = []

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

    /// Fails reading the pin sets only, while the change counter still answers.
    func failPinSets(with error: (any Error)?) {
        lock.withLock { pinSetsFailure = error }
    }

    /// Full reads.
    var reads: Int { lock.withLock { pinSetReads } }

    /// The `previous` of every `pinSetChanges(since:)` call.
    var updates: [[PinSetHeader]] { lock.withLock { updateRequests } }

    /// Like a store: the pin sets of the customers new or changed since `previous` only.
    func pinSetChanges(since previous: [PinSetHeader]) throws -> PinSetChanges {
        try lock.withLock {
            updateRequests.append(previous)
            if let failure = failure ?? pinSetsFailure { throw failure }
            let known = Dictionary(uniqueKeysWithValues: previous.map { ($0.customer, $0) })
            return PinSetChanges(
                headers: pinSets.map(\.header),
                pinSets: pinSets.filter { pinSet in known[pinSet.customer].map(pinSet.header.differsForSigning(from:)) ?? true }
            )
        }
    }

    func allPinSets() throws -> [PinSet] {
        try lock.withLock {
            pinSetReads += 1
            if let failure = failure ?? pinSetsFailure { throw failure }
            return pinSets
        }
    }

    func changeCounter() throws -> Int64 {
        try lock.withLock {
            if let failure { throw failure }
            return counter
        }
    }
}

struct StoreUnavailable: Error {}

struct BundleRefresherTests {
    static func pinSet(_ name: String, version: Int64) throws -> PinSet {
        let pin = Pin(spkiSHA256: SHA256Fingerprint(of: Array(name.utf8)), source: PinSource(kind: .hash))
        return PinSet(customer: try CustomerName(name), version: version, hosts: [HostPins(hostname: try Hostname("\(name).example.com"), pins: [pin])])
    }

    static func makeRefresher(
        source: ScriptedSource, cache: BundleCache, metrics: ServerMetrics? = nil, maxContentStaleness: TimeInterval = 3600,
        identity: SigningIdentity? = nil, now: @escaping @Sendable () -> Date = Date.init
    ) throws -> BundleRefresher {
        BundleRefresher(
            source: source,
            pass: SigningPass(signer: BundleSigner(identity: try identity ?? TestPKI.signingIdentity()), bundleLifetime: 3600),
            cache: cache,
            metrics: metrics,
            logger: Logger(label: "test"),
            resignInterval: 300,
            changePollInterval: 0.05,
            maxContentStaleness: maxContentStaleness,
            now: now
        )
    }

    @Test func keepsTheLastGoodBundlesWhenSigningFails() throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1)])
        let cache = BundleCache()
        let metrics = ServerMetrics()
        let refresher = try Self.makeRefresher(source: source, cache: cache, metrics: metrics, maxContentStaleness: 0)
        #expect(refresher.refreshNow(reason: "test"))
        let good = try #require(cache.bundle(for: try CustomerName("acme")))

        source.fail(with: StoreUnavailable())
        #expect(!refresher.refreshNow(reason: "test"))
        #expect(try cache.bundle(for: try CustomerName("acme"))?.bytes == good.bytes)
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
        #expect(try await eventually { cache.bundle(for: try CustomerName("globex")) != nil })
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

    @Test func reSignsTheLastLoadedContentWhileTheStoreIsUnavailableWithinTheWindow() throws {
        let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        let source = ScriptedSource([try Self.pinSet("acme", version: 7)])
        let cache = BundleCache()
        let metrics = ServerMetrics()
        let refresher = try Self.makeRefresher(source: source, cache: cache, metrics: metrics, maxContentStaleness: 600, now: clock.now)
        #expect(refresher.refreshNow(reason: "test"))
        let loadedAt = clock.now()

        source.fail(with: StoreUnavailable())
        clock.advance(by: 300)
        #expect(refresher.refreshNow(reason: "test"))
        let resigned = try #require(cache.bundle(for: try CustomerName("acme")))
        #expect(resigned.version == 7)
        #expect(cache.snapshot.signedAt == Int64(clock.now().timeIntervalSince1970))
        #expect(refresher.status.storeUnavailableSince == clock.now())
        #expect(refresher.status.contentLoadedAt == loadedAt)
        #expect(refresher.status.storeError?.contains("StoreUnavailable") == true)
        var text = String(decoding: metrics.registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains("pinset_store_up 0"))
        #expect(text.contains("pinset_store_unavailable_since_timestamp_seconds \(Int64(clock.now().timeIntervalSince1970))"))

        // Past the window the content is no longer re-signed; the last bundles stay until they age out.
        clock.advance(by: 301)
        #expect(!refresher.refreshNow(reason: "test"))
        #expect(refresher.status.lastError?.contains("maxContentStalenessSeconds") == true)
        #expect(cache.snapshot.signedAt == Int64(loadedAt.timeIntervalSince1970) + 300)

        // Back: the edit made meanwhile is signed, and the outage is over.
        source.set([try Self.pinSet("acme", version: 8)])
        source.fail(with: nil)
        #expect(refresher.refreshNow(reason: "test"))
        #expect(cache.bundle(for: try CustomerName("acme"))?.version == 8)
        #expect(refresher.status.storeUnavailableSince == nil)
        text = String(decoding: metrics.registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains("pinset_store_up 1"))
    }

    @Test func aStoreThatNeverAnsweredHasNothingToReSign() throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1)])
        source.fail(with: StoreUnavailable())
        let refresher = try Self.makeRefresher(source: source, cache: BundleCache())
        #expect(!refresher.refreshNow(reason: "test"))
        #expect(refresher.status.storeUnavailableSince != nil)
    }

    @Test func theScheduleKeepsBundlesFreshDuringAnOutageAndPicksUpEditsWhenTheStoreReturns() async throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1)])
        let cache = BundleCache()
        let refresher = BundleRefresher(
            source: source,
            pass: SigningPass(signer: BundleSigner(identity: try TestPKI.signingIdentity()), bundleLifetime: 3600),
            cache: cache, metrics: nil, logger: Logger(label: "test"),
            resignInterval: 1, changePollInterval: 0.05, maxContentStaleness: 3600
        )
        #expect(refresher.start())
        defer { refresher.stop() }
        let first = cache.snapshot.signedAt
        source.fail(with: StoreUnavailable())
        #expect(try await eventually { cache.snapshot.signedAt > first })
        #expect(refresher.status.storeUnavailableSince != nil)

        source.set([try Self.pinSet("acme", version: 2)])
        source.fail(with: nil)
        #expect(try await eventually {
            cache.bundle(for: try CustomerName("acme"))?.version == 2 && refresher.status.storeUnavailableSince == nil
        })
    }
}

extension BundleRefresherTests {
    /// An edit re-signs the edited customer only; the others keep their bundles until the scheduled pass, and
    /// the cache reports the oldest bundle's time.
    @Test func aChangeReSignsOnlyTheChangedCustomers() async throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1), try Self.pinSet("globex", version: 1)])
        let cache = BundleCache()
        let refresher = try Self.makeRefresher(source: source, cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        let globex = try #require(cache.bundle(for: try CustomerName("globex")))
        // Past the second the first pass signed in, so that a new signature has a new timestamp.
        try await Task.sleep(for: .milliseconds(1100))
        source.set([try Self.pinSet("acme", version: 2), try Self.pinSet("globex", version: 1)])
        #expect(try await eventually { cache.bundle(for: try CustomerName("acme"))?.version == 2 })
        #expect(try cache.bundle(for: try CustomerName("globex"))?.bytes == globex.bytes)
        #expect(cache.bundle(for: try CustomerName("acme"))!.timestamp > globex.timestamp)
        #expect(cache.snapshot.signedAt == globex.timestamp)
    }

    /// A change asks the source for what changed since the content loaded last (a store then reads only changed
    /// customers); a start and the schedule read everything.
    @Test func aChangeUpdatesTheLastLoadedContentAndTheScheduleReadsAll() async throws {
        let first = [try Self.pinSet("acme", version: 1), try Self.pinSet("globex", version: 1)]
        let source = ScriptedSource(first)
        let cache = BundleCache()
        let refresher = try Self.makeRefresher(source: source, cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        #expect(source.reads == 1 && source.updates.isEmpty)
        let second = [try Self.pinSet("acme", version: 2), try Self.pinSet("globex", version: 1)]
        source.set(second)
        #expect(try await eventually { cache.bundle(for: try CustomerName("acme"))?.version == 2 })
        #expect(source.updates == [first.map(\.header)])
        #expect(source.reads == 1)

        source.set([try Self.pinSet("acme", version: 3), try Self.pinSet("globex", version: 1)])
        #expect(try await eventually { cache.bundle(for: try CustomerName("acme"))?.version == 3 })
        #expect(source.updates == [first.map(\.header), second.map(\.header)])
        #expect(refresher.refreshNow(reason: "schedule"))
        #expect(source.reads == 2)
    }
}

extension BundleRefresherTests {
    /// Pin sets that cannot be read while the counter still answers: the content loaded earlier is not re-signed
    /// on every poll, and the store is tried again every retry interval only.
    @Test func anUnreadableStoreIsRetriedAtTheRetryIntervalNotOnEveryPoll() async throws {
        let source = ScriptedSource([try Self.pinSet("acme", version: 1)])
        let cache = BundleCache()
        let refresher = try Self.makeRefresher(source: source, cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        source.failPinSets(with: StoreUnavailable())
        source.set([try Self.pinSet("acme", version: 2)])
        #expect(try await eventually { refresher.status.storeUnavailableSince != nil })
        let reads = source.reads
        // Twenty polls at 50 ms; the retry interval is 5 s. A read the change had already started when the failure
        // was observed may land in the second too (seen on a loaded machine); a read on every poll would be twenty.
        try await Task.sleep(for: .seconds(1))
        #expect(source.reads <= reads + 2, "\(source.reads - reads) reads in one second")
        #expect(cache.bundle(for: try CustomerName("acme"))?.version == 1)
    }
}

extension BundleRefresherTests {
    /// The payload of a bundle signed by `identity`.
    static func content(of bundle: SignedBundle?, signedBy identity: SigningIdentity) async throws -> [UInt8] {
        let bundle = try #require(bundle)
        return try await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [identity.certificate], at: Date()).get().content
    }

    /// A change serves the changed customer's new hosts, read from the source; the others keep their bundles.
    @Test func aChangeServesTheNewHostsOfTheChangedCustomer() async throws {
        let globex = try Self.pinSet("globex", version: 1)
        let source = ScriptedSource([try Self.pinSet("acme", version: 1), globex])
        let cache = BundleCache()
        let identity = try TestPKI.signingIdentity()
        let refresher = try Self.makeRefresher(source: source, cache: cache, identity: identity)
        #expect(refresher.start())
        defer { refresher.stop() }
        let served = try #require(cache.bundle(for: globex.customer))
        var acme = try Self.pinSet("acme", version: 2)
        acme.hosts.append(HostPins(hostname: try Hostname("www.acme.example.com"), pins: acme.hosts[0].pins))
        source.set([acme, globex])
        #expect(try await eventually { cache.bundle(for: acme.customer)?.version == 2 })
        let bundle = try #require(cache.bundle(for: acme.customer))
        let expected = BundlePayload(pinSet: acme, timestamp: bundle.timestamp, expires: bundle.expires).encoded()
        #expect(try await Self.content(of: bundle, signedBy: identity) == expected)
        #expect(try cache.bundle(for: globex.customer)?.bytes == served.bytes)
    }

    /// While the store is unavailable, each customer is signed again with exactly the content loaded last.
    @Test func anOutageReSignsExactlyTheContentLoadedLast() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        let pinSets = [try Self.pinSet("acme", version: 7), try Self.pinSet("globex", version: 3)]
        let source = ScriptedSource(pinSets)
        let cache = BundleCache()
        let identity = try TestPKI.signingIdentity()
        let refresher = try Self.makeRefresher(source: source, cache: cache, maxContentStaleness: 600, identity: identity, now: clock.now)
        #expect(refresher.refreshNow(reason: "test"))

        source.fail(with: StoreUnavailable())
        clock.advance(by: 300)
        #expect(refresher.refreshNow(reason: "test"))
        let signedAt = Int64(clock.now().timeIntervalSince1970)
        for pinSet in pinSets {
            let bundle = try #require(cache.bundle(for: pinSet.customer))
            #expect(bundle.timestamp == signedAt)
            let expected = BundlePayload(pinSet: pinSet, timestamp: signedAt, expires: signedAt + 3600).encoded()
            #expect(try await Self.content(of: bundle, signedBy: identity) == expected)
        }
    }

    /// A customer the last pass could not sign has no bundle to take its content from: during an outage it is
    /// signed from the content loaded for it, once nothing stands in the way any more.
    @Test func aCustomerNotSignedBeforeAnOutageIsSignedFromTheContentLoadedLast() async throws {
        let start = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let clock = TestClock(start)
        // 100 s further ahead of the clock than a version may be: refused until the clock has moved on.
        let aheadVersion = (Int64(start.timeIntervalSince1970) + BundleBounds.maximumVersionLead / 1000 + 100) * 1000
        let ahead = try Self.pinSet("ahead", version: aheadVersion)
        let source = ScriptedSource([try Self.pinSet("acme", version: 1), ahead])
        let cache = BundleCache()
        let identity = try TestPKI.signingIdentity()
        let refresher = try Self.makeRefresher(source: source, cache: cache, maxContentStaleness: 600, identity: identity, now: clock.now)
        #expect(refresher.refreshNow(reason: "test"))
        #expect(cache.bundle(for: ahead.customer) == nil)
        #expect(refresher.status.customerFailures.map(\.customer) == [ahead.customer])

        source.fail(with: StoreUnavailable())
        clock.advance(by: 200)
        #expect(refresher.refreshNow(reason: "test"))
        let bundle = try #require(cache.bundle(for: ahead.customer))
        let signedAt = Int64(clock.now().timeIntervalSince1970)
        let expected = BundlePayload(pinSet: ahead, timestamp: signedAt, expires: signedAt + 3600).encoded()
        #expect(try await Self.content(of: bundle, signedBy: identity) == expected)
        #expect(refresher.status.customerFailures.isEmpty)
    }
}
