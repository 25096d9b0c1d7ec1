import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PinsetCore
import PinsetFileSystem
import PinsetLogPublishing
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
        /// Customers whose new content waits for a witnessed checkpoint; their earlier bundle is served meanwhile.
        public var customersAwaitingWitnesses = 0
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
    /// Where the bundles of each full pass are persisted for the next start; `nil` keeps them in memory only.
    private let archivePath: String?
    /// How many customers a full pass reads and signs at a time. What a batch allocates while it is signed (its
    /// pin sets, payloads, signatures and bundles) is most of what a pass adds to the steady memory: about 11 MiB
    /// for 500, about 46 MiB for 2,000 (BENCHMARKS.md, "Scale").
    private let batchSize: Int
    private let archiveWriter: ArchiveWriter?
    /// Where the bundles signed are moved out of memory: the data directory, when bundles are persisted.
    private let spoolDirectory: String?
    /// The spool of the last full pass, which change passes append to; `nil` until a pass makes one, and while
    /// none can be made (the bundles are then held in memory).
    private var spool: BundleSpool?
    /// Earlier spools while a served bundle may still be read from one, with the bytes each holds.
    private var retiredSpools: [RetiredSpool] = []
    /// Bytes earlier spools may hold that are no longer served, beyond those still served from them, before what
    /// is served from them is copied to the current spool.
    private let spoolSlackBytes: Int
    /// Whether the spool's last problem was logged; cleared once a spool works again, so a lasting problem is
    /// logged once, not at every pass.
    private var spoolProblemLogged = false
    /// The transparency log served beside the bundles: brought up to date after pin sets are read and before the
    /// bundles signed from them are served, so its checkpoint covers every content they carry.
    private let transparencyLog: TransparencyLogPublisher?
    private var lastLoaded: LoadedContent?
    /// The persisted bundles the first pass starts from, until it has moved them into the cache: held nowhere
    /// else, so that each is freed as the pass replaces it.
    private var startupArchive: [BundleArchive.Entry]?
    private let now: @Sendable () -> Date
    private let queue = DispatchQueue(label: "pinset.refresher")
    private var timer: (any DispatchSourceTimer)?
    private var changeObservation: (any ChangeObservation)?
    private var lastSeenChange: Int64?
    private var nextScheduledPass = Date.distantPast
    private var nextStoreCheck = Date.distantPast
    private var nextWitnessRetry = Date.distantPast
    /// The pins a pass holds past their publish windows, as last logged: each hold is logged when it begins and
    /// when it ends, not at every tick.
    private var heldPins: [String: HeldPinWindow] = [:]
    /// Customers whose new content waits for a witnessed checkpoint, served their older bundle meanwhile; not
    /// counted in the instance's readiness.
    private var waitingForWitnesses: Set<CustomerName> = []
    private let servedChains: @Sendable () -> ServedChains
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
        archivePath: String? = nil,
        batchSize: Int = 500,
        spoolSlackBytes: Int = 16 << 20,
        transparencyLog: TransparencyLogPublisher? = nil,
        servedChains: @escaping @Sendable () -> ServedChains = { ServedChains() },
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.servedChains = servedChains
        self.transparencyLog = transparencyLog
        self.archivePath = archivePath
        self.batchSize = max(1, batchSize)
        self.spoolSlackBytes = max(0, spoolSlackBytes)
        archiveWriter = archivePath.map { ArchiveWriter(path: $0, logger: logger) }
        spoolDirectory = archivePath.map(AtomicFile.parentDirectory(of:))
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
    /// then schedules the rest. With a persisted archive of the last full pass, the first pass signs only the
    /// customers whose archived bundle the store or the signing identities no longer match, or which is older
    /// than `resignInterval`; the others are served as archived until the next scheduled pass.
    @discardableResult
    public func start() -> Bool {
        let succeeded = queue.sync {
            startupArchive = loadArchive()
            defer { startupArchive = nil }
            return runPass(reason: "startup")
        }
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
        // The last pass's bundles are written before the process exits (a crash leaves the previous archive).
        archiveWriter?.stop()
    }

    /// Signs now, regardless of schedule. Returns whether the pass succeeded.
    @discardableResult
    public func refreshNow(reason: String) -> Bool {
        queue.sync { runPass(reason: reason) }
    }

    private func tick() {
        applyPinWindows()
        endLapsedReportOnlyWindows()
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
            // Witnesses that did not cosign are asked again on the retry interval, not on every edit: edits arriving
            // faster than a stalled witness times out would otherwise keep the refresher from anything else.
            let askWitnesses = now() >= nextWitnessRetry
            runPass(reason: "change", observedCounter: counter, askingFailedWitnesses: askWitnesses)
            if askWitnesses { nextWitnessRetry = now().addingTimeInterval(retryInterval) }
        } else if now() >= nextScheduledPass {
            // Before any witness retry: a pass that re-signs every customer must never wait behind witnesses that
            // stall (each retry can take their whole timeout), or every bundle would go stale for one held edit. It
            // asks witnesses that did not cosign only when a retry is due anyway.
            let askWitnesses = now() >= nextWitnessRetry
            runPass(reason: "schedule", askingFailedWitnesses: askWitnesses)
            if askWitnesses { nextWitnessRetry = now().addingTimeInterval(retryInterval) }
        } else if transparencyLog?.awaitsWitnesses == true, now() >= nextWitnessRetry {
            // Content held back for want of cosignatures is served by the first pass after a quorum cosigns. The
            // interval counts from the end of the retry, so a retry as long as the interval leaves room for others.
            runPass(reason: "change", observedCounter: counter)
            nextWitnessRetry = now().addingTimeInterval(retryInterval)
        }
    }

    /// Must run on `queue`. `observedCounter` is a change counter already read by the caller; either way it is
    /// read before the pin sets, so an edit made during the pass moves the counter and triggers another pass.
    @discardableResult
    private func runPass(reason: String, observedCounter: Int64? = nil, askingFailedWitnesses: Bool = true) -> Bool {
        // Before the pin sets are read: a window whose end has passed is a change, and this pass signs without it.
        if observedCounter == nil { endLapsedReportOnlyWindows() }
        let succeeded = signAndPublish(reason: reason, observedCounter: observedCounter, askingFailedWitnesses: askingFailedWitnesses)
        // A pass allocates and frees several times what it keeps (the pin sets read, payloads, CMS buffers);
        // without this the allocator holds on to the freed pages, and the process keeps the high-water mark of
        // its largest pass for good. Here, once the pass's temporaries are gone, it costs a few milliseconds per
        // pass.
        _ = Self.releaseFreedMemory?(0)
        return succeeded
    }

    /// Ends the report-only windows whose time has passed by this refresher's clock. Each ended window moves the
    /// change counter, so the tick that called this signs the customer again at once. A store that does not answer
    /// is reported by the counter read that follows; until it answers, bundles re-signed from the content loaded
    /// earlier may still announce a window that has ended, which clients read as over (`report-only-until` before
    /// the bundle's `timestamp`).
    private func endLapsedReportOnlyWindows() {
        do {
            let ended = try source.endReportOnlyWindows(endingBy: now())
            if ended > 0 { logger.notice("report-only windows ended", metadata: ["hosts": "\(ended)"]) }
        } catch {
            logger.debug("report-only windows not checked: \(error)")
        }
    }

    /// glibc's `malloc_trim`, which the Glibc module does not export; nil where the C library has none.
    private static let releaseFreedMemory: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Signs one batch against the bundles served now: those of its customers that `reusing` allows are kept
    /// where their header still matches, and any may have its content taken from its served bundle. Looks up only
    /// the batch's customers, so a pass over many batches costs each batch, not the whole deployment each time.
    private func signBatch(_ customers: [SigningPass.Customer], reusing: Content.Reuse, at attemptAt: Date) -> SigningPassResult {
        let served = cache.snapshot.bundles
        // A batch of every customer (a change pass) takes the served bundles as they are, without a copy.
        var ofBatch: [CustomerName: SignedBundle] = customers.count >= served.count ? served : [:]
        if customers.count < served.count {
            ofBatch.reserveCapacity(customers.count)
            for customer in customers {
                if let bundle = served[customer.header.customer] { ofBatch[customer.header.customer] = bundle }
            }
        }
        let kept: [CustomerName: SignedBundle] = switch reusing {
        case .none: [:]
        case .all: ofBatch
        case .signedSince(let since, let lifetime): ofBatch.filter { $0.value.timestamp >= since && $0.value.expires - $0.value.timestamp == lifetime }
        }
        return pass.run(customers, now: attemptAt, reusing: kept, contentOf: ofBatch)
    }

    /// The bundles whose content the transparency log's served checkpoint covers: with witnesses, content logged
    /// after the last size a quorum cosigned waits, and its customer keeps the bundle served before. The held
    /// ones are counted in `totals`, which the pass reports in one line.
    private func servable(_ bundles: [SignedBundle], totals: inout PassTotals) -> [SignedBundle] {
        guard let transparencyLog else { return bundles }
        return bundles.filter { bundle in
            if transparencyLog.covers(bundle.customer, version: bundle.version) {
                totals.servedCustomers.insert(bundle.customer)
                return true
            }
            totals.holdForWitnesses(bundle)
            return false
        }
    }

    /// A new spool in the data directory; `nil`, logged, when none can be made there.
    private func newSpool() -> BundleSpool? {
        guard let spoolDirectory else { return nil }
        do {
            return try BundleSpool(directory: spoolDirectory)
        } catch {
            logSpoolProblem("\(error)")
            return nil
        }
    }

    /// `bundles` moved to the spool, or as they are (in memory) when there is none or it cannot be written.
    private func spooled(_ bundles: [SignedBundle]) -> [SignedBundle] {
        guard let spool else { return bundles }
        let (stored, error) = spool.store(bundles)
        if let error { logSpoolProblem("\(error)") } else { spoolProblemLogged = false }
        return stored
    }

    /// Copies the bundles still served from earlier spools (customers a full pass could not sign, content held for
    /// witnesses, customers a failed pass did not reach) to the current spool, batch by batch, once the earlier
    /// spools hold more bytes no longer served than served (plus `spoolSlackBytes`): the copying then costs at
    /// most what it frees, and the spools never take more than about three times the bytes served.
    private func compactRetiredSpools() {
        retiredSpools.removeAll { $0.file == nil }
        guard let spool, !retiredSpools.isEmpty else { return }
        let retiredBytes = retiredSpools.reduce(0) { $0 + $1.bytes }
        let onRetired = cache.snapshot.bundles.values.filter { bundle in
            bundle.isSpooled && !bundle.isStored(in: spool.file)
        }
        let servedBytes = onRetired.reduce(0) { $0 + $1.byteCount }
        guard retiredBytes - servedBytes > servedBytes + spoolSlackBytes else { return }
        for start in stride(from: 0, to: onRetired.count, by: batchSize) {
            let (moved, error) = spool.adopt(Array(onRetired[start..<min(onRetired.count, start + batchSize)]))
            if let error {
                logSpoolProblem("\(error)")
                return
            }
            cache.relocate(moved)
        }
        retiredSpools.removeAll { $0.file == nil }
    }

    private func logSpoolProblem(_ reason: String) {
        guard !spoolProblemLogged else { return }
        spoolProblemLogged = true
        logger.warning("Signed bundles are held in memory: the spool in the data directory cannot be used", metadata: [
            "directory": "\(spoolDirectory ?? "")", "error": "\(reason)",
        ])
    }

    /// The archive of the last full pass, if there is one and it can be read; an unusable one is logged and
    /// ignored (every customer is then signed, as without one).
    private func loadArchive() -> [BundleArchive.Entry]? {
        guard let archivePath else { return nil }
        let started = ContinuousClock.now
        do {
            // The start's pass signs into the spool the bundles kept were moved to.
            spool = newSpool()
            guard let entries = try BundleArchive.read(from: archivePath, movingBundlesTo: spool) else { return nil }
            logger.info("Persisted bundles read", metadata: [
                "bundles": "\(entries.count)", "duration_ms": "\((ContinuousClock.now - started).milliseconds)", "path": "\(archivePath)",
            ])
            return entries
        } catch {
            logger.warning("\(error)")
            return nil
        }
    }

    /// Starts and stops listing the pins whose publish windows begin or end by now, before the change counter is
    /// read: a pin entering or leaving gives its customer a new content version, which this tick's pass then signs.
    /// A pin whose departure would leave its host listing no pin of the chain the monitor last saw it serve is
    /// held (logged when the hold begins and ends). While the store cannot be written, the content loaded stays as
    /// it is and the next tick tries again.
    private func applyPinWindows() {
        do {
            let result = try source.applyPinWindows(at: now(), servedChains: servedChains())
            for transition in result.transitions {
                logger.notice("A pin \(transition.entered ? "entered" : "left") the bundle at the edge of its publish window", metadata: [
                    "customer": "\(transition.customer)", "host": "\(transition.hostname)", "pin": "\(transition.pin.displayName)",
                    "window": "\(transition.pin.window?.description ?? "none")", "version": "\(transition.version)",
                ])
            }
            let held = Dictionary(result.held.map { ("\($0.customer)/\($0.hostname.rawValue)/\($0.pin.displayName)", $0) }) { first, _ in first }
            for (key, hold) in held.sorted(by: { $0.key < $1.key }) where heldPins[key] == nil {
                logger.error("A pin stays in the bundle past its publish window: without it the host would list no pin of the chain it serves. Pin the key it serves, or move the window with 'pinset pin window'", metadata: [
                    "customer": "\(hold.customer)", "host": "\(hold.hostname)", "pin": "\(hold.pin.displayName)",
                    "window": "\(hold.pin.window?.description ?? "none")", "chain_seen_at": "\(PinWindow.format(hold.chainObservedAt))",
                    "held_until_at_most": "\(PinWindow.format(hold.holdEnds))",
                ])
            }
            for (key, hold) in heldPins.sorted(by: { $0.key < $1.key }) where held[key] == nil {
                let left = result.transitions.contains { $0.pin == hold.pin && $0.hostname == hold.hostname && !$0.entered }
                logger.notice(left ? "A held pin left the bundle" : "A pin is no longer held past its publish window", metadata: [
                    "customer": "\(hold.customer)", "host": "\(hold.hostname)", "pin": "\(hold.pin.displayName)",
                ])
            }
            heldPins = held
        } catch {
            logger.warning("Publish windows could not be applied: \(error)")
        }
    }

    private func signAndPublish(reason: String, observedCounter: Int64?, askingFailedWitnesses: Bool) -> Bool {
        if observedCounter == nil { applyPinWindows() }
        let archived = startupArchive.map { (headers: $0.map(\.header), count: $0.count) }
        let started = ContinuousClock.now
        let attemptAt = now()
        let passTime = Int64(attemptAt.timeIntervalSince1970)
        do {
            // A change (only ever seen while the store answers) reads and re-signs only what changed; so does a
            // start from persisted bundles, against the headers they were signed for. The schedule, a start
            // without them, and a store coming back read and sign all, page by page, which also picks up
            // anything edited behind the store's back.
            let incremental = reason == "change"
            // Still unavailable: the content loaded earlier is re-signed on the schedule, not on every check.
            guard let content = try loadContent(
                observedCounter: observedCounter, incremental: incremental, archivedHeaders: archived?.headers,
                fallBackToLoaded: reason != "store check", at: attemptAt
            ) else { return false }
            // Every content version just read was logged in the transaction that made it. Content loaded earlier
            // (the store is unavailable) is under the checkpoint served since then.
            if content.counter != nil { try transparencyLog?.advance(askingFailedWitnesses: askingFailedWitnesses) }
            var totals = PassTotals()
            var loaded = LoadedContent.Builder(expecting: lastLoaded?.headers.count ?? 0)
            // Every pass but a change pass signs every customer it can again, into a new spool (the start's pass
            // into the one its persisted bundles were moved to): the previous one is freed once the last bundle read
            // from it is replaced. After every such pass, finished or not, what is still served from earlier
            // spools is copied over if they hold more bytes no longer served than served (`compactRetiredSpools`),
            // so failing passes and lasting failures cannot make the spools grow without bound.
            if spool == nil || (!incremental && archived == nil) {
                if let spool { retiredSpools.append(RetiredSpool(file: spool.file, bytes: spool.size)) }
                spool = newSpool()
            }
            defer { if !incremental { compactRetiredSpools() } }
            func sign(_ customers: [SigningPass.Customer], reusing: Content.Reuse) {
                let result = signBatch(customers, reusing: reusing, at: attemptAt)
                // A persisted bundle is served only where this pass could have kept it: not for a customer whose
                // identity cannot sign now (it may have been replaced because its key leaked).
                cache.merge(spooled(servable(result.bundles, totals: &totals)), failures: result.failures, keepingFailedCustomersBundles: archived == nil)
                totals.add(result)
                loaded.add(customers, servedAs: cache.snapshot.bundles)
                // The batch's old bundles are free now. Returned to the system at once: the next batch allocates
                // on whichever worker threads sign it, whose malloc arenas need not be the ones these were freed
                // to, and without this a full pass would grow by every bundle it replaces.
                _ = Self.releaseFreedMemory?(0)
            }
            switch content.customers {
            case .listed(let customers, let reuse):
                if let entries = startupArchive, content.counter != nil {
                    // Not served yet: the pass below replaces or keeps each, batch by batch.
                    startupArchive = nil
                    cache.replace(with: entries.map(\.bundle), signedAt: passTime)
                }
                // A change pass keeps every bundle it does not re-sign, so one batch holds no second copy.
                let batch = incremental ? max(1, customers.count) : batchSize
                for start in stride(from: 0, to: customers.count, by: batch) {
                    sign(Array(customers[start..<min(customers.count, start + batch)]), reusing: reuse)
                }
            case .pages(let first):
                var page = first
                while true {
                    sign(page.pinSets.map(SigningPass.Customer.init), reusing: .none)
                    guard let next = page.next else { break }
                    page = try source.pinSetPage(after: next, limit: batchSize)
                    // Witnesses that did not cosign at the start of this pass are not asked again for every page.
                    try transparencyLog?.advance(askingFailedWitnesses: false)
                }
            }
            // A change pass signs some customers only: those held by an earlier pass and not signed by this one still wait.
            waitingForWitnesses = waitingForWitnesses.subtracting(totals.servedCustomers).union(totals.heldCustomers).intersection(loaded.customers)
            cache.finishPass(customers: loaded.customers, failures: totals.failures, held: waitingForWitnesses, passTime: passTime)
            lastLoaded = loaded.content(at: content.loadedAt)
            if let counter = content.counter { lastSeenChange = counter }
            if let archived, content.counter != nil {
                // The bundles kept from the archive are re-signed when the pass that signed them would have been.
                let oldest = cache.snapshot.bundles.values.lazy.map(\.timestamp).min() ?? passTime
                nextScheduledPass = Date(timeIntervalSince1970: TimeInterval(oldest)).addingTimeInterval(resignInterval)
                logger.info("Persisted bundles loaded", metadata: [
                    "bundles": "\(archived.count)", "kept": "\(totals.bundleCount - totals.signed)",
                    "duration_ms": "\((ContinuousClock.now - started).milliseconds)",
                ])
            } else if !incremental {
                nextScheduledPass = attemptAt.addingTimeInterval(resignInterval)
            }
            if !incremental, content.counter != nil, let archiveWriter, let lastLoaded {
                archiveWriter.write(cache.snapshot.bundles, headers: lastLoaded.headers)
            }
            let duration = ContinuousClock.now - started
            statusBox.withLock {
                $0.lastSuccessAt = attemptAt
                $0.lastAttemptAt = attemptAt
                $0.lastError = nil
                $0.consecutiveFailures = 0
                $0.lastPassDuration = duration
                $0.customerCount = totals.bundleCount
                $0.customerFailures = totals.failures
                $0.defaultIdentityProblem = totals.defaultIdentityProblem
                $0.warnings = totals.warnings
                $0.identityExpiries = totals.identityExpiries
                $0.customersAwaitingWitnesses = waitingForWitnesses.count
            }
            metrics?.recordSigningPass(bundles: totals.signed, duration: duration)
            metrics?.recordCustomersNotSigned(totals.failures.count)
            metrics?.recordIdentityExpiry(totals.expiry)
            for loaded in totals.loadedIdentities {
                logger.notice("Signing identity loaded", metadata: ["identity": "\(loaded)", "at": "\(attemptAt.formatted(.iso8601))"])
            }
            for failure in totals.failures {
                logger.error("Customer not signed; its last good bundle is served while fresh, then 503", metadata: [
                    "customer": "\(failure.customer)", "signer": "\(failure.signer.rawValue)", "error": "\(failure.reason)",
                ])
            }
            for warning in totals.warnings {
                logger.warning("Signing certificate expires soon", metadata: ["warning": "\(warning)"])
            }
            if totals.heldForWitnesses > 0 {
                // One line per pass, however many customers wait: a pass runs every retry interval while they do.
                logger.warning("New content waits for a witnessed checkpoint; the previous bundles are served meanwhile", metadata: [
                    "customers": "\(totals.heldForWitnesses)", "first": "\(totals.heldExamples.joined(separator: ", "))",
                    "awaiting_entries": "\(transparencyLog?.entriesAwaitingWitnesses ?? 0)",
                ])
            }
            logger.info("Signed bundles", metadata: [
                "customers": "\(totals.bundleCount)", "not_signed": "\(totals.failures.count)", "reason": "\(reason)", "signed": "\(totals.signed)",
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

    /// What a pass signs: customers listed in memory, or the store's pages from the first one read.
    private struct Content {
        /// Which served bundles a customer keeps when its header still matches.
        enum Reuse {
            case none
            case all
            /// Those signed at or after a time, with the bundle lifetime in force.
            case signedSince(Int64, lifetime: Int64)
        }

        enum Customers {
            case listed([SigningPass.Customer], reuse: Reuse)
            case pages(first: PinSetPage)
        }

        let customers: Customers
        /// The change counter read before the content; `nil` when the content is the one loaded earlier.
        let counter: Int64?
        let loadedAt: Date
    }

    /// The customers to sign, the change counter read before them, and when they were read: from the store, or
    /// — while it cannot be read, within `maxContentStaleness` of the last load, and if `fallBackToLoaded` —
    /// the content loaded last, with no counter; `nil` when the store cannot be read and `fallBackToLoaded` is
    /// false. `incremental` reads the hosts and pins of only the customers changed since the last load;
    /// `archivedHeaders`, of only those changed since the persisted bundles were signed.
    private func loadContent(
        observedCounter: Int64?, incremental: Bool, archivedHeaders: [PinSetHeader]?, fallBackToLoaded: Bool, at attemptAt: Date
    ) throws -> Content? {
        do {
            let counter = try observedCounter ?? source.changeCounter()
            let customers: Content.Customers
            if let archivedHeaders {
                let changes = try source.pinSetChanges(since: archivedHeaders)
                let read = Dictionary(changes.pinSets.lazy.map { ($0.customer, $0.hosts) }, uniquingKeysWith: { first, _ in first })
                let freshSince = Int64(attemptAt.addingTimeInterval(-resignInterval).timeIntervalSince1970)
                customers = .listed(
                    changes.headers.map { SigningPass.Customer(header: $0, hosts: read[$0.customer]) },
                    reuse: .signedSince(freshSince, lifetime: pass.bundleLifetime)
                )
            } else if incremental, let lastLoaded {
                customers = .listed(lastLoaded.customers(updatedBy: try source.pinSetChanges(since: lastLoaded.headers)), reuse: .all)
            } else {
                customers = .pages(first: try source.pinSetPage(after: nil, limit: batchSize))
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
            return Content(customers: customers, counter: counter, loadedAt: attemptAt)
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
            return Content(customers: .listed(lastLoaded.customers(updatedBy: nil), reuse: incremental ? .all : .none), counter: nil, loadedAt: lastLoaded.at)
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

    /// Collects a pass's customers batch by batch, keeping the hosts of those no served bundle holds.
    struct Builder {
        private(set) var headers: [PinSetHeader] = []
        private(set) var customers: Set<CustomerName> = []
        private var unserved: [CustomerName: (version: Int64, hosts: [HostPins])] = [:]

        /// Sized for `count` customers (the last load's), so that collecting a large deployment does not hold
        /// an outgrown copy of each list while it grows.
        init(expecting count: Int) {
            headers.reserveCapacity(count)
            customers.reserveCapacity(count)
        }

        mutating func add(_ batch: [SigningPass.Customer], servedAs bundles: [CustomerName: SignedBundle]) {
            for customer in batch {
                let header = customer.header
                customers.insert(header.customer)
                if bundles[header.customer]?.holdsEncodedHosts(ofVersion: header.version) != true {
                    guard let hosts = customer.hosts else {
                        // Its content is held nowhere (a persisted bundle this pass could not keep): left out of
                        // the headers, the next change pass reads it from the store as a new customer.
                        continue
                    }
                    unserved[header.customer] = (header.version, hosts)
                }
                headers.append(header)
            }
        }

        /// Sorted in place and handed over: no second list of every header.
        mutating func content(at date: Date) -> LoadedContent {
            // Pages come in the store's order of customers; the headers are kept sorted by name.
            headers.sort { $0.customer.rawValue < $1.customer.rawValue }
            return LoadedContent(headers: headers, unservedHosts: unserved, at: date)
        }
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

/// An earlier spool, known only while a bundle still holds it open.
private struct RetiredSpool {
    weak var file: BundleFile?
    let bytes: Int
}

/// A pass's figures summed over its batches.
private struct PassTotals {
    var bundleCount = 0
    var signed = 0
    var failures: [SigningIdentityFailure] = []
    var defaultIdentityProblem: String?
    var warnings: [String] = []
    var expiry = SigningIdentityExpiry()
    var identityExpiries: [SigningIdentityExpiry.Figures] = []
    var loadedIdentities: [String] = []
    /// Customers whose new content waits for a witnessed checkpoint, and the first few of them as `name@version`.
    var heldForWitnesses = 0
    var heldExamples: [String] = []
    var heldCustomers: Set<CustomerName> = []
    /// Customers whose bundle this pass signed and serves (with a transparency log).
    var servedCustomers: Set<CustomerName> = []

    mutating func holdForWitnesses(_ bundle: SignedBundle) {
        heldForWitnesses += 1
        heldCustomers.insert(bundle.customer)
        if heldExamples.count < 5 { heldExamples.append("\(bundle.customer)@\(bundle.version)") }
    }

    mutating func add(_ result: SigningPassResult) {
        bundleCount += result.bundles.count
        signed += result.signed
        failures += result.failures
        defaultIdentityProblem = defaultIdentityProblem ?? result.defaultIdentityProblem
        // Every batch reports the identities it used: each is listed once.
        for warning in result.warnings where !warnings.contains(warning) { warnings.append(warning) }
        expiry.include(result.expiry)
        for figures in result.identityExpiries where !identityExpiries.contains(where: { $0.customer == figures.customer }) {
            identityExpiries.append(figures)
        }
        loadedIdentities += result.loadedIdentities
    }
}
