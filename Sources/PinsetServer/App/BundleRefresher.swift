import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetSigning

/// Keeps the bundle cache signed: a full pass at start, every `resignInterval`, and within
/// `changePollInterval` (plus the pass itself) of an admin change.
///
/// If a pass fails, the last good bundles stay in the cache, the failure is logged and counted, and readiness
/// turns false once the served bundles are older than clients accept; the pass is retried every
/// `retryInterval`. All scheduling runs on one serial queue, so passes never overlap.
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
    }

    private let source: any PinSetSource
    private let pass: SigningPass
    private let cache: BundleCache
    private let metrics: ServerMetrics?
    private let logger: Logger
    private let resignInterval: TimeInterval
    private let changePollInterval: TimeInterval
    private let retryInterval: TimeInterval
    private let now: @Sendable () -> Date
    private let queue = DispatchQueue(label: "pinset.refresher")
    private var timer: (any DispatchSourceTimer)?
    private var lastSeenChange: Int64?
    private var nextScheduledPass = Date.distantPast
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
        self.now = now
    }

    public var status: Status { statusBox.value }

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
        return succeeded
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
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
            logger.error("Could not read the change counter", metadata: ["error": "\(error)"])
            return
        }
        if counter != lastSeenChange {
            runPass(reason: "change", observedCounter: counter)
        } else if now() >= nextScheduledPass {
            runPass(reason: "schedule")
        }
    }

    /// Must run on `queue`. `observedCounter` is a change counter already read by the caller; either way it is
    /// read before the pin sets, so an edit made during the pass moves the counter and triggers another pass.
    @discardableResult
    private func runPass(reason: String, observedCounter: Int64? = nil) -> Bool {
        let started = ContinuousClock.now
        let attemptAt = now()
        do {
            let counter = try observedCounter ?? source.changeCounter()
            let pinSets = try source.allPinSets()
            let result = pass.run(pinSets, now: attemptAt)
            cache.replace(with: result.bundles, failures: result.failures, signedAt: Int64(attemptAt.timeIntervalSince1970))
            lastSeenChange = counter
            nextScheduledPass = attemptAt.addingTimeInterval(resignInterval)
            let duration = ContinuousClock.now - started
            statusBox.update {
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
            metrics?.recordSigningPass(bundles: result.bundles.count, duration: duration)
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
                "customers": "\(result.bundles.count)", "not_signed": "\(result.failures.count)", "reason": "\(reason)",
                "duration_ms": "\(duration.milliseconds)",
            ])
            return true
        } catch {
            nextScheduledPass = attemptAt.addingTimeInterval(retryInterval)
            statusBox.update {
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
}
