import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PinsetCore
import PinsetPublishing
import PinsetSigning
import PinsetStore

/// Keeps the bundle cache signed: a full pass at start, every `resignInterval`, and within
/// `changePollInterval` (plus the pass itself) of an admin change — at once where the source pushes changes
/// (PostgreSQL's LISTEN/NOTIFY), with the poll as the fallback while that connection is down.
///
/// If a pass fails, the last good bundles stay in the cache, the failure is logged and counted, and readiness
/// turns false once the served bundles are older than clients accept; the pass is retried every
/// `retryInterval`. All scheduling runs on one serial queue, so passes never overlap.
///
/// When the store cannot be read (a database server that is down or unreachable), passes keep re-signing the
/// content last loaded, so bundles stay fresh, for up to `maxContentStaleness` after that load; `status` says
/// since when the store is unavailable. Apps then get pins that may miss edits made meanwhile — edits that no
/// instance can read either — instead of a 503. After the window, passes fail as above. When the store
/// answers again, the next poll loads its content, edits made meanwhile included.
///
/// The content loaded last is, for every customer signed at its loaded version, what its served bundle
/// carries: between passes the refresher keeps only each customer's header (version, signer, revocation
/// floor), and a customer's hosts only while no bundle of that version is served for it.
public final class BundleRefresher: @unchecked Sendable {
    // `@unchecked Sendable`: mutable state is touched only on `queue`; `status` is behind its own lock.

    public struct Status: Sendable {
        public var lastSuccessAt: Date?
        public var lastAttemptAt: Date?
        public var lastError: String?
        public var consecutiveFailures = 0
        public var lastPassDuration: Duration?
        public var customerCount = 0
        /// Customers the last pass could not sign, with the reason.
        public var customerFailures: [SigningIdentityFailure] = []
        /// Why the deployment's default identity cannot sign, as of the last pass.
        public var defaultIdentityProblem: String?
        /// Certificates close to expiry, as of the last pass.
        public var warnings: [String] = []
        /// Per signing identity in use, as of the last pass: signer and root expiry, revocation floor.
        public var identityExpiries: [SigningIdentityExpiry.Figures] = []
        /// Since when reading the store fails; `nil` while it answers.
        public var storeUnavailableSince: Date?
        /// Why the last read of the store failed, while it is unavailable.
        public var storeError: String?
        /// When the content being signed was read from the store.
        public var contentLoadedAt: Date?
    }

    private let source: any PinSetSource
    private let pass: SigningPass
    private let cache: BundleCache
    private let metrics: ServerMetrics?
    private let logger: Logger
    private let resignInterval: TimeInterval
    private let changePollInterval: TimeInterval
    private let retryInterval: TimeInterval
    private let maxContentStaleness: TimeInterval
    private var lastLoaded: LoadedContent?
    private let now: @Sendable () -> Date
    private let queue = DispatchQueue(label: "pinset.refresher")
    private var timer: (any DispatchSourceTimer)?
    private var changeObservation: (any ChangeObservation)?
    private var lastSeenChange: Int64?
    private var nextScheduledPass = Date.distantPast
    private var nextStoreCheck = Date.distantPast
    private let statusBox = LockedValue(Status())

    public init(
        source: any PinSetSource,
        pass: SigningPass,
        cache: BundleCache,
        metrics: ServerMetrics?,
        logger: Logger,
        resignInterval: TimeInterval,
        changePollInterval: TimeInterval = 0.5,
        retryInterval: TimeInterval = 5,
        maxContentStaleness: TimeInterval = 3600,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.source = source
        self.pass = pass
        self.cache = cache
        self.metrics = metrics
        self.logger = logger
        self.resignInterval = resignInterval
        self.changePollInterval = changePollInterval
        self.retryInterval = retryInterval
        self.maxContentStaleness = maxContentStaleness
        self.now = now
    }

    public var status: Status { statusBox.withLock { $0 } }

    /// Runs the first pass synchronously (so a server is ready when it starts listening, or knows why not),
    /// then schedules the rest.
    @discardableResult
    public func start() -> Bool {
        let succeeded = queue.sync { runPass(reason: "startup") }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + changePollInterval, repeating: changePollInterval, leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.tick() }
        self.timer = timer
        timer.resume()
        let observation = source.observeChanges { [weak self] in
            guard let self else { return }
            self.queue.async { self.tick() }
        }
        queue.sync { changeObservation = observation }
        return succeeded
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            changeObservation?.cancel()
            changeObservation = nil
        }
    }

    /// Signs now, regardless of schedule. Returns whether the pass succeeded.
    @discardableResult
    public func refreshNow(reason: String) -> Bool {
        queue.sync { runPass(reason: reason) }
    }

    private func tick() {
        let counter: Int64
        do {
            counter = try source.changeCounter()
        } catch {
            noteStoreUnavailable(error, at: now())
            // Keeps the bundles fresh from the content last loaded, on the usual schedule.
            if now() >= nextScheduledPass { runPass(reason: "schedule") }
            return
        }
        if statusBox.withLock({ $0.storeUnavailableSince }) != nil {
            // While the pin sets cannot be read, the content loaded earlier is re-signed on the schedule only;
            // whether the store answers again is checked every retryInterval.
            if now() >= nextScheduledPass {
                runPass(reason: "schedule")
            } else if now() >= nextStoreCheck {
                nextStoreCheck = now().addingTimeInterval(retryInterval)
                runPass(reason: "store check", observedCounter: counter)
            }
        } else if counter != lastSeenChange {
            runPass(reason: "change", observedCounter: counter)
        } else if now() >= nextScheduledPass {
            runPass(reason: "schedule")
        }
    }

    /// Must run on `queue`. `observedCounter` is a change counter already read by the caller; either way it is
    /// read before the pin sets, so an edit made during the pass moves the counter and triggers another pass.
    @discardableResult
    private func runPass(reason: String, observedCounter: Int64? = nil) -> Bool {
        let succeeded = signAndPublish(reason: reason, observedCounter: observedCounter)
        // A pass allocates and frees several times what it keeps (the pin sets read, payloads, CMS buffers);
        // without this the allocator holds on to the freed pages, and the process keeps the high-water mark of
        // its largest pass for good. Here, once the pass's temporaries are gone, it costs a few milliseconds per
        // pass.
        _ = Self.releaseFreedMemory?(0)
        return succeeded
    }

    /// glibc's `malloc_trim`, which the Glibc module does not export; nil where the C library has none.
    private static let releaseFreedMemory: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    private func signAndPublish(reason: String, observedCounter: Int64?) -> Bool {
        let started = ContinuousClock.now
        let attemptAt = now()
        do {
            // A change (only ever seen while the store answers) reads and re-signs only what changed; the
            // schedule, a start, and a store coming back read and sign all, which also picks up anything edited
            // behind the store's back.
            let incremental = reason == "change"
            // Still unavailable: the content loaded earlier is re-signed on the schedule, not on every check.
            guard let (customers, counter, loadedAt) = try loadContent(
                observedCounter: observedCounter, incremental: incremental, fallBackToLoaded: reason != "store check", at: attemptAt
            ) else { return false }
            let served = cache.snapshot.bundles
            let result = pass.run(customers, now: attemptAt, reusing: incremental ? served : [:], contentOf: served)
            // The oldest bundle served decides how fresh the cache is.
            let signedAt = result.bundles.lazy.map(\.timestamp).min() ?? Int64(attemptAt.timeIntervalSince1970)
            cache.replace(with: result.bundles, failures: result.failures, signedAt: signedAt)
            lastLoaded = LoadedContent(customers, servedAs: cache.snapshot.bundles, at: loadedAt)
            if let counter { lastSeenChange = counter }
            if !incremental { nextScheduledPass = attemptAt.addingTimeInterval(resignInterval) }
            let duration = ContinuousClock.now - started
            statusBox.withLock {
                $0.lastSuccessAt = attemptAt
                $0.lastAttemptAt = attemptAt
                $0.lastError = nil
                $0.consecutiveFailures = 0
                $0.lastPassDuration = duration
                $0.customerCount = result.bundles.count
                $0.customerFailures = result.failures
                $0.defaultIdentityProblem = result.defaultIdentityProblem
                $0.warnings = result.warnings
                $0.identityExpiries = result.identityExpiries
            }
            metrics?.recordSigningPass(bundles: result.signed, duration: duration)
            metrics?.recordCustomersNotSigned(result.failures.count)
            metrics?.recordIdentityExpiry(result.expiry)
            for loaded in result.loadedIdentities {
                logger.notice("Signing identity loaded", metadata: ["identity": "\(loaded)", "at": "\(attemptAt.formatted(.iso8601))"])
            }
            for failure in result.failures {
                logger.error("Customer not signed; its last good bundle is served while fresh, then 503", metadata: [
                    "customer": "\(failure.customer)", "signer": "\(failure.signer.rawValue)", "error": "\(failure.reason)",
                ])
            }
            for warning in result.warnings {
                logger.warning("Signing certificate expires soon", metadata: ["warning": "\(warning)"])
            }
            logger.info("Signed bundles", metadata: [
                "customers": "\(result.bundles.count)", "not_signed": "\(result.failures.count)", "reason": "\(reason)", "signed": "\(result.signed)",
                "duration_ms": "\(duration.milliseconds)",
            ])
            return true
        } catch {
            nextScheduledPass = attemptAt.addingTimeInterval(retryInterval)
            statusBox.withLock {
                $0.lastAttemptAt = attemptAt
                $0.lastError = String(describing: error)
                $0.consecutiveFailures += 1
            }
            metrics?.recordSigningFailure()
            logger.error("Signing pass failed; still serving the last good bundles", metadata: [
                "reason": "\(reason)", "error": "\(error)",
            ])
            return false
        }
    }

    /// The customers to sign, the change counter read before them, and when they were read: from the store, or
    /// — while it cannot be read, within `maxContentStaleness` of the last load, and if `fallBackToLoaded` —
    /// the content loaded last, with no counter; `nil` when the store cannot be read and `fallBackToLoaded` is
    /// false. `incremental` reads the hosts and pins of only the customers changed since the last load.
    private func loadContent(
        observedCounter: Int64?, incremental: Bool, fallBackToLoaded: Bool, at attemptAt: Date
    ) throws -> (customers: [SigningPass.Customer], counter: Int64?, loadedAt: Date)? {
        do {
            let counter = try observedCounter ?? source.changeCounter()
            let customers = if incremental, let lastLoaded {
                lastLoaded.customers(updatedBy: try source.pinSetChanges(since: lastLoaded.headers))
            } else {
                try source.allPinSets().map(SigningPass.Customer.init)
            }
            if let since = statusBox.withLock({ $0.storeUnavailableSince }) {
                logger.notice("The store is available again", metadata: ["unavailable_since": "\(since.formatted(.iso8601))"])
            }
            statusBox.withLock {
                $0.storeUnavailableSince = nil
                $0.storeError = nil
                $0.contentLoadedAt = attemptAt
            }
            metrics?.recordStoreAvailability(unavailableSince: nil)
            return (customers, counter, attemptAt)
        } catch {
            noteStoreUnavailable(error, at: attemptAt)
            guard fallBackToLoaded else { return nil }
            guard let lastLoaded else { throw error }
            let age = attemptAt.timeIntervalSince(lastLoaded.at)
            guard age <= maxContentStaleness else {
                throw StoreOutageError(
                    loadedAt: lastLoaded.at, maxContentStaleness: maxContentStaleness, underlying: String(describing: error)
                )
            }
            logger.warning("The store is unavailable; re-signing the content loaded earlier", metadata: [
                "loaded_at": "\(lastLoaded.at.formatted(.iso8601))", "max_content_staleness_s": "\(Int(maxContentStaleness))",
            ])
            return (lastLoaded.customers(updatedBy: nil), nil, lastLoaded.at)
        }
    }

    /// Records the first failure of an outage (and logs it once); later failures only refresh the reason.
    private func noteStoreUnavailable(_ error: any Error, at date: Date) {
        let reason = String(describing: error)
        let since = statusBox.withLock { $0.storeUnavailableSince }
        if since == nil {
            logger.error("The store is unavailable; serving and re-signing the content loaded last", metadata: ["error": "\(reason)"])
        }
        statusBox.withLock {
            $0.storeUnavailableSince = since ?? date
            $0.storeError = reason
        }
        metrics?.recordStoreAvailability(unavailableSince: since ?? date)
    }
}

/// The store has been unavailable for longer than the content may be re-signed unchanged.
struct StoreOutageError: Error, CustomStringConvertible {
    let loadedAt: Date
    let maxContentStaleness: TimeInterval
    let underlying: String

    var description: String {
        "the store is unavailable (\(underlying)) and the content loaded at \(loadedAt.formatted(.iso8601)) is older than maxContentStalenessSeconds (\(Int(maxContentStaleness)) s), so it is no longer re-signed"
    }
}

/// What the last load of the store leaves for the passes after it: each customer's header, sorted by name, and
/// the hosts of the customers whose content no served bundle holds at that version (those a pass could not
/// sign). The others' content is in the bundle served for them, encoded, so it is not kept a second time.
private struct LoadedContent {
    let headers: [PinSetHeader]
    let unservedHosts: [CustomerName: (version: Int64, hosts: [HostPins])]
    /// When the content was read from the store.
    let at: Date

    init(_ customers: [SigningPass.Customer], servedAs bundles: [CustomerName: SignedBundle], at: Date) {
        headers = customers.map(\.header)
        var unserved: [CustomerName: (version: Int64, hosts: [HostPins])] = [:]
        for customer in customers where bundles[customer.header.customer]?.holdsEncodedHosts(ofVersion: customer.header.version) != true {
            if let hosts = customer.hosts { unserved[customer.header.customer] = (customer.header.version, hosts) }
        }
        unservedHosts = unserved
        self.at = at
    }

    /// The customers of a pass: those `changes` lists, with the hosts it read; without `changes`, those loaded
    /// last. A customer whose hosts were not read gets those kept here for its version, or none: the pass then
    /// signs its served bundle's content again.
    func customers(updatedBy changes: PinSetChanges?) -> [SigningPass.Customer] {
        let read = Dictionary((changes?.pinSets ?? []).lazy.map { ($0.customer, $0.hosts) }, uniquingKeysWith: { first, _ in first })
        return (changes?.headers ?? headers).map { header in
            SigningPass.Customer(header: header, hosts: read[header.customer] ?? kept(header))
        }
    }

    private func kept(_ header: PinSetHeader) -> [HostPins]? {
        guard let kept = unservedHosts[header.customer], kept.version == header.version else { return nil }
        return kept.hosts
    }
}
