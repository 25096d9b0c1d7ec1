import Foundation
import Logging
import PinsetCore
import PinsetPublishing
import PinsetServer
import PinsetSigning
import PinsetStore
import PinsetTestSupport
import Testing

/// A restart serves what the last full pass signed instead of signing every customer first — but only what the
/// store and the signing identity still stand behind: an old, foreign or damaged archive never reaches a client.
struct PersistedBundlesTests {
    private final class Deployment: Sendable {
        let directory: TemporaryDirectory
        let clock: TestClock
        let source: ScriptedSource
        let identity: SigningIdentity
        var archivePath: String { directory.file(BundleArchive.fileName) }

        init(customers: [PinSet]) throws {
            directory = try TemporaryDirectory()
            clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
            source = ScriptedSource(customers)
            identity = try TestPKI.signingIdentity()
        }

        deinit { directory.remove() }

        /// A server's refresher on this deployment, as one `pinset serve` would run it.
        func refresher(
            cache: BundleCache, identity: SigningIdentity? = nil, identities: SigningIdentityDirectory? = nil,
            source: (any PinSetSource)? = nil, batchSize: Int = 2000, spoolSlackBytes: Int = 16 << 20
        ) -> BundleRefresher {
            BundleRefresher(
                source: source ?? self.source,
                pass: SigningPass(identities: identities ?? SigningIdentityDirectory(defaultIdentity: identity ?? self.identity), bundleLifetime: 3600),
                cache: cache, metrics: nil, logger: Logger(label: "test"),
                resignInterval: 300, changePollInterval: 0.05, archivePath: archivePath, batchSize: batchSize,
                spoolSlackBytes: spoolSlackBytes, now: clock.now
            )
        }

        /// A SQLite store in the deployment's directory with `customers` customers of one host and one pin each.
        func store(customers: Int) throws -> PinStore {
            let store = try PinStore.open(path: directory.file("pinset.sqlite"))
            for index in 1...customers {
                let customer = try NumberedCustomers.name(index), host = try NumberedCustomers.hostname(index)
                try store.addCustomer(customer, actor: "test")
                try store.addHost(host, to: customer, actor: "test")
                try store.addPins([NumberedCustomers.pin(index)], to: host, of: customer, actor: "test")
            }
            return store
        }

        /// The spool files this process holds open in the deployment's directory (they have no name there).
        var openSpools: Int {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.count { fd in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)") else { return false }
                return target.hasPrefix(directory.path + "/") && target.hasSuffix("(deleted)")
            }
        }

        /// Starts a server, lets it persist its bundles, stops it; returns what it served.
        @discardableResult
        func run(identity: SigningIdentity? = nil) throws -> [CustomerName: SignedBundle] {
            let cache = BundleCache()
            let refresher = refresher(cache: cache, identity: identity)
            #expect(refresher.start())
            refresher.stop()
            return cache.snapshot.bundles
        }
    }

    private static func customers(_ versions: [String: Int64]) throws -> [PinSet] {
        try versions.sorted { $0.key < $1.key }.map { try BundleRefresherTests.pinSet($0.key, version: $0.value) }
    }

    @Test func aRestartServesTheLastPassesBundlesWithoutSigningThem() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4, "initech": 9]))
        let first = try deployment.run()
        var info = stat()
        #expect(stat(deployment.archivePath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)

        deployment.clock.advance(by: 120)
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        // ECDSA signatures are randomised: the same bytes are the persisted bundles, not new signatures.
        #expect(try cache.snapshot.bundles.mapValues { try $0.bytes } == first.mapValues { try $0.bytes })
        #expect(refresher.status.customerFailures.isEmpty)
        // The kept bundles are as old as they are, not as the start.
        #expect(cache.snapshot.signedAt == first.values.map(\.timestamp).min())
        #expect(deployment.source.reads == 1, "the restart read only the customers changed since, not every pin set")
    }

    /// The database went back in time while the server was stopped (an older copy put in place, a snapshot restored):
    /// it holds an older version of acme than the one served. Apps refuse it as a rollback, and it may lack a floor the
    /// served one carries: it is not signed, the served bundle stays, and the failure says what happened and what to
    /// do; the instance stays ready for the others. In a running server too, on the next change.
    @Test func aDatabaseGoneBackInTimeIsNotSignedOverWhatWasServed() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 5, "globex": 4]))
        let first = try deployment.run()
        deployment.source.set(try Self.customers(["acme": 3, "globex": 4]))
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        let acme = try CustomerName("acme"), globex = try CustomerName("globex")
        #expect(try cache.bundle(for: acme)?.bytes == first[acme]?.bytes)
        let failure = try #require(refresher.status.customerFailures.first { $0.customer == acme })
        #expect(failure.kind == .versionBehindServed)
        #expect(failure.reason.contains("version 3, older than version 5") && failure.reason.contains("pinset store restore"), "\(failure.reason)")
        #expect(cache.bundle(for: globex)?.version == 4)

        deployment.source.set(try Self.customers(["acme": 4, "globex": 4]))
        #expect(refresher.refreshNow(reason: "change"))
        #expect(cache.bundle(for: acme)?.version == 5)
        #expect(refresher.status.customerFailures.contains { $0.customer == acme && $0.kind == .versionBehindServed })
        // An edit made since moves the version past the served one: signed as usual.
        deployment.source.set(try Self.customers(["acme": 6, "globex": 4]))
        #expect(refresher.refreshNow(reason: "change"))
        #expect(cache.bundle(for: acme)?.version == 6)
        #expect(refresher.status.customerFailures.isEmpty)
    }

    @Test func onlyTheCustomersEditedWhileStoppedAreSignedAgain() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4]))
        let first = try deployment.run()
        deployment.source.set(try Self.customers(["acme": 2, "globex": 4, "hooli": 1]))
        let second = try deployment.run()
        let acme = try CustomerName("acme"), globex = try CustomerName("globex"), hooli = try CustomerName("hooli")
        #expect(second[acme]?.version == 2)
        #expect(try second[acme]?.bytes != first[acme]?.bytes)
        #expect(try second[globex]?.bytes == first[globex]?.bytes)
        #expect(second[hooli]?.version == 1)
    }

    /// A start never lets a bundle's age exceed what a running server would serve: past the re-sign interval
    /// the persisted content is signed again, from the bundle itself, without reading its hosts.
    @Test func bundlesOlderThanTheResignIntervalAreSignedAgain() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4]))
        let first = try deployment.run()
        deployment.clock.advance(by: 301)
        let second = try deployment.run()
        #expect(second.count == 2)
        for (customer, bundle) in second {
            #expect(try bundle.bytes != first[customer]?.bytes)
            #expect(bundle.version == first[customer]?.version)
            #expect(bundle.timestamp == Int64(deployment.clock.now().timeIntervalSince1970))
        }
        #expect(deployment.source.reads == 1, "only the first start read every pin set")
    }

    @Test func anotherSigningIdentityMeansEveryBundleIsSignedAgain() async throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1]))
        try deployment.run()
        let rotated = try TestPKI.signingIdentity(commonName: "Pinset Test Trust Server 2")
        let second = try deployment.run(identity: rotated)
        let bundle = try #require(second[try CustomerName("acme")])
        let verified = await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [rotated.certificate], at: deployment.clock.now())
        #expect((try? verified.get()) != nil)
    }

    /// The signer was replaced while the server was stopped (perhaps because its key leaked) by one that cannot
    /// sign: the old signer's persisted bundles are not served in its place.
    @Test func noPersistedBundleIsServedForACustomerWhoseIdentityCannotSignNow() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1]))
        try deployment.run()
        let missing = SigningIdentityDirectory(locations: SigningIdentityLocations(
            defaultKeyPath: deployment.directory.file("no-key.pem"), defaultCertificatePath: deployment.directory.file("no-cert.pem"),
            customerKeyDirectory: deployment.directory.file("customers")
        ))
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache, identities: missing)
        refresher.start()
        defer { refresher.stop() }
        #expect(cache.bundle(for: try CustomerName("acme")) == nil)
        #expect(cache.failure(for: try CustomerName("acme")) != nil)
    }

    /// Served bundles are read from an unlinked spool in the data directory rather than held in memory; each full
    /// pass starts a new one, and the previous one is freed once nothing is served from it.
    @Test func servedBundlesLiveOnASpoolThatEachFullPassReplaces() async throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4, "initech": 9]))
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache, batchSize: 2)
        #expect(refresher.refreshNow(reason: "schedule"))
        let first = cache.snapshot.bundles
        weak let firstSpool = first.values.first?.file
        #expect(firstSpool != nil && first.values.allSatisfy { $0.isSpooled && $0.file === firstSpool })
        for bundle in first.values {
            let verified = await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [deployment.identity.certificate], at: deployment.clock.now())
            #expect((try? verified.get()) != nil)
        }

        deployment.clock.advance(by: 300)
        #expect(refresher.refreshNow(reason: "schedule"))
        let second = cache.snapshot.bundles
        #expect(second.count == 3 && second.values.allSatisfy { $0.isSpooled && $0.file !== firstSpool && $0.file === second.values.first?.file })
        refresher.stop()
        _ = consume first
        #expect(firstSpool == nil, "the previous spool is closed once no bundle is served from it")
        #expect(try FileManager.default.contentsOfDirectory(atPath: deployment.directory.path) == [BundleArchive.fileName])
    }

    /// A start moves the persisted bundles it keeps to its spool as it reads them: what it serves no longer
    /// depends on the file, which may be written over in place (a backup copied onto it) without changing a byte
    /// served.
    @Test func aStartServesItsPersistedBundlesFromItsOwnSpool() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4]))
        let first = try deployment.run().mapValues { try $0.bytes }
        deployment.clock.advance(by: 60)
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache)
        #expect(refresher.start())
        defer { refresher.stop() }
        let served = cache.snapshot.bundles
        #expect(served.count == 2 && served.values.allSatisfy { $0.isSpooled && $0.file === served.values.first?.file })
        let overwrite = try #require(FileHandle(forWritingAtPath: deployment.archivePath))
        try overwrite.write(contentsOf: Data(repeating: 0x41, count: 64 * 1024))
        try overwrite.close()
        for (customer, bundle) in served { #expect(try bundle.bytes == first[customer]) }
        #expect(deployment.openSpools == 1)
    }

    /// Full passes that fail part-way, again and again, leave at most the spool of the last finished pass and the
    /// current one open; once earlier spools hold more bytes no longer served than served, what is served from
    /// them is copied over and they are freed.
    @Test func failingFullPassesDoNotAccumulateSpools() async throws {
        let deployment = try Deployment(customers: [])
        let store = try deployment.store(customers: 6)
        defer { try? store.close() }
        let source = PageFailingSource(store)
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache, source: source, batchSize: 2, spoolSlackBytes: 0)
        #expect(refresher.refreshNow(reason: "schedule"))
        weak let finished = cache.snapshot.bundles.values.first?.file
        #expect(finished != nil && deployment.openSpools == 1)

        // Each pass re-signs the first page of two customers, then fails: four of six stay on the finished spool.
        source.failAfter(pages: 1)
        for _ in 0..<8 {
            deployment.clock.advance(by: 1)
            #expect(!refresher.refreshNow(reason: "schedule"))
            #expect(deployment.openSpools == 2)
        }
        #expect(finished != nil)
        #expect(cache.snapshot.bundles.values.count { $0.file === finished } == 4)

        // Two pages re-signed: the finished spool holds four bundles no longer served against two served.
        source.failAfter(pages: 2)
        deployment.clock.advance(by: 1)
        #expect(!refresher.refreshNow(reason: "schedule"))
        // The archive writer may still hold the first pass's bundles for a moment.
        #expect(try await eventually { finished == nil })
        #expect(deployment.openSpools == 1)
        let served = cache.snapshot.bundles
        #expect(served.count == 6 && served.values.allSatisfy { $0.isSpooled && $0.file === served.values.first?.file })
        for bundle in served.values {
            let verified = await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [deployment.identity.certificate], at: deployment.clock.now())
            #expect((try? verified.get()) != nil)
        }
    }

    /// A full pass leaves a customer it cannot sign its last bundle; that bundle is copied to the pass's spool, so
    /// the previous spool (as large as every bundle) is not kept for it.
    @Test func aBundleKeptForAFailedCustomerMovesToTheNewSpool() async throws {
        let deployment = try Deployment(customers: [])
        let locations = SigningIdentityLocations(
            defaultKeyPath: deployment.directory.file("signing-key.pem"), defaultCertificatePath: deployment.directory.file("trust-cert.pem"),
            customerKeyDirectory: deployment.directory.file("customers")
        )
        try deployment.identity.write(keyPath: locations.defaultKeyPath, certificatePEMPath: locations.defaultCertificatePath, certificateDERPath: deployment.directory.file("trust-cert.der"))
        let own = try CustomerName("own"), plain = try CustomerName("plain")
        try FileManager.default.createDirectory(atPath: locations.directory(of: own), withIntermediateDirectories: true)
        try TestPKI.signingIdentity(commonName: "own").write(
            keyPath: locations.keyPath(of: own), certificatePEMPath: locations.certificatePEMPath(of: own), certificateDERPath: locations.certificateDERPath(of: own)
        )
        let source = ScriptedSource([
            PinSet(customer: own, version: 1, hosts: [], signer: .customerOwn),
            PinSet(customer: plain, version: 1, hosts: [], signer: .deploymentDefault),
        ])
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache, identities: SigningIdentityDirectory(locations: locations), source: source, spoolSlackBytes: 0)
        defer { refresher.stop() }
        #expect(refresher.refreshNow(reason: "schedule"))
        let lastGood = try #require(cache.bundle(for: own))
        let (etag, timestamp, bytes) = (lastGood.etag, lastGood.timestamp, try lastGood.bytes)
        weak let firstSpool = lastGood.file
        _ = consume lastGood
        #expect(firstSpool != nil)

        unlink(locations.keyPath(of: own))
        deployment.clock.advance(by: 300)
        #expect(refresher.refreshNow(reason: "schedule"))
        let kept = try #require(cache.bundle(for: own))
        #expect(cache.failure(for: own) != nil)
        #expect(kept.etag == etag && kept.timestamp == timestamp)
        #expect(try kept.bytes == bytes)
        #expect(kept.isSpooled && kept.file === cache.bundle(for: plain)?.file)
        #expect(try await eventually { firstSpool == nil }, "the previous spool is freed")
        #expect(deployment.openSpools == 1)
    }

    @Test func aCustomerRemovedWhileStoppedIsNotServed() throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4]))
        try deployment.run()
        deployment.source.set(try Self.customers(["acme": 1]))
        let second = try deployment.run()
        #expect(Set(second.keys) == [try CustomerName("acme")])
    }

    /// Someone who can put an older archive in place (a restored backup, a copied data directory) cannot bring
    /// back pins the store has since removed: the store's version decides.
    @Test func aReplayedOlderArchiveCannotServeContentTheStoreHasReplaced() async throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1]))
        try deployment.run()
        let old = try [UInt8](Data(contentsOf: URL(fileURLWithPath: deployment.archivePath)))
        let pin = Pin(spkiSHA256: SHA256Fingerprint(of: Array("new key".utf8)), source: PinSource(kind: .hash))
        let replaced = PinSet(customer: try CustomerName("acme"), version: 2, hosts: [HostPins(hostname: try Hostname("acme.example.com"), pins: [pin])])
        deployment.source.set([replaced])
        try deployment.run()
        _ = try deployment.directory.write(BundleArchive.fileName, old, mode: 0o600)

        let served = try #require(try deployment.run()[try CustomerName("acme")])
        #expect(served.version == 2)
        let content = try await SignatureVerifier.verify(try served.bytes, trustAnchors: [deployment.identity.certificate], at: deployment.clock.now()).get().content
        #expect(try BundlePayload.decode(content).hosts.flatMap(\.spkiSHA256) == [try #require(pin.spkiSHA256)])
    }

    @Test(arguments: ["damaged", "group-writable", "not an archive"])
    func anUnusableArchiveIsIgnoredAndEveryCustomerSigned(_ problem: String) throws {
        let deployment = try Deployment(customers: try Self.customers(["acme": 1, "globex": 4]))
        let first = try deployment.run()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: deployment.archivePath)))
        switch problem {
        case "damaged": bytes[bytes.count / 2] ^= 0x80
        case "not an archive": bytes = Array("{\"customer\": \"acme\"}".utf8)
        default: break
        }
        _ = try deployment.directory.write(BundleArchive.fileName, bytes, mode: problem == "group-writable" ? 0o660 : 0o600)
        #expect(chmod(deployment.archivePath, problem == "group-writable" ? 0o660 : 0o600) == 0)
        let second = try deployment.run()
        #expect(second.count == 2)
        for (customer, bundle) in second { #expect(try bundle.bytes != first[customer]?.bytes) }
        #expect(deployment.source.reads == 2)
    }

    @Test func withoutAnArchivePathNothingIsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = BundleCache()
        let refresher = BundleRefresher(
            source: ScriptedSource(try Self.customers(["acme": 1])),
            pass: SigningPass(signer: BundleSigner(identity: try TestPKI.signingIdentity()), bundleLifetime: 3600),
            cache: cache, metrics: nil, logger: Logger(label: "test"), resignInterval: 300
        )
        #expect(refresher.start())
        refresher.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(cache.snapshot.bundles.count == 1)
    }

    /// A full pass over a real store in batches: every customer is signed once, removed ones leave, and the
    /// served set never lacks a customer that exists.
    @Test func aFullPassSignsTheDeploymentBatchByBatch() throws {
        let deployment = try Deployment(customers: [])
        let store = try deployment.store(customers: 7)
        defer { try? store.close() }
        let cache = BundleCache()
        let refresher = deployment.refresher(cache: cache, source: store, batchSize: 3)
        #expect(refresher.refreshNow(reason: "schedule"))
        #expect(cache.snapshot.bundles.count == 7)
        #expect(refresher.status.customerCount == 7)

        try store.removeCustomer(try CustomerName("customer-2"), actor: "test")
        try store.addCustomer(try CustomerName("customer-8"), actor: "test")
        deployment.clock.advance(by: 1)
        #expect(refresher.refreshNow(reason: "schedule"))
        let served = cache.snapshot.bundles
        #expect(served.count == 7)
        #expect(served[try CustomerName("customer-2")] == nil)
        #expect(served[try CustomerName("customer-8")] != nil)
        #expect(served.values.allSatisfy { $0.timestamp == Int64(deployment.clock.now().timeIntervalSince1970) })
        #expect(cache.snapshot.signedAt == Int64(deployment.clock.now().timeIntervalSince1970))
    }
}

/// The store, with page reads after the first few of a pass failing on demand: a full pass that stops part-way.
private final class PageFailingSource: PinSetSource, @unchecked Sendable {
    // `@unchecked Sendable`: `pagesBeforeFailure` and `pagesThisPass` are behind `lock`.
    private let store: PinStore
    private let lock = NSLock()
    private var pagesBeforeFailure: Int?
    private var pagesThisPass = 0

    init(_ store: PinStore) { self.store = store }

    func failAfter(pages: Int?) { lock.withLock { pagesBeforeFailure = pages } }

    func allPinSets() throws -> [PinSet] { try store.allPinSets() }
    func pinSetChanges(since previous: [PinSetHeader]) throws -> PinSetChanges { try store.pinSetChanges(since: previous) }
    func changeCounter() throws -> Int64 { try store.changeCounter() }
    func applyPinWindows(at time: Date, servedChains: ServedChains) throws -> PinWindowPass {
        try store.applyPinWindows(at: time, servedChains: servedChains)
    }
    func endReportOnlyWindows(endingBy time: Date) throws -> Int { try store.endReportOnlyWindows(endingBy: time) }

    func pinSetPage(after cursor: PinSetPage.Cursor?, limit: Int) throws -> PinSetPage {
        try lock.withLock {
            pagesThisPass = cursor == nil ? 1 : pagesThisPass + 1
            if let pagesBeforeFailure, pagesThisPass > pagesBeforeFailure { throw StoreUnavailable() }
        }
        return try store.pinSetPage(after: cursor, limit: limit)
    }
}
