import Foundation
import Logging
import NIOPosix
import PinsetCore
import PinsetLiveCheck

/// Where the monitor reads the hosts to check. The SQLite store in production.
public protocol MonitoredHostSource: Sendable {
    /// Every pinned host of every customer, and every unmonitored one with its reason.
    func monitoringJobs() throws -> [HostCheckJob]
}

/// Checks every pinned, monitored host on a schedule, with the same check as `pinset check`, and keeps the
/// results for `/status`, the metrics and the log.
///
/// Runs in its own task with its own event loop thread for the outgoing connections, never on the serving
/// path: at most `concurrency` connections are open at once, each bounded by `timeoutSeconds`. Every instance
/// runs its own monitor, so several instances are several vantage points.
public final class HostMonitor: Sendable {
    /// What `/status` reports.
    public struct Report: Sendable {
        public var ledger = MonitorLedger()
        public var passes = 0
        public var lastPassStartedAt: Date?
        public var lastPassCompletedAt: Date?
        public var lastPassDuration: Duration?
        /// Why the last pass could not read the hosts, if it could not.
        public var lastError: String?
    }

    public let configuration: ServerConfiguration.Monitoring
    private let source: any MonitoredHostSource
    private let checker: HostChecker
    private let group: MultiThreadedEventLoopGroup
    private let metrics: ServerMetrics?
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let reportBox = LockedValue(Report())
    private let servedChainsBox = LockedValue(ServedChains())
    private let storeQueue = DispatchQueue(label: "pinset.monitor.store")
    private let loop = LockedValue<Task<Void, Never>?>(nil)

    /// - Throws: `ConfigurationError` when `caFile` cannot be read: a monitor that would report every host
    ///   unreachable is refused at start.
    public init(
        configuration: ServerConfiguration.Monitoring, source: any MonitoredHostSource, metrics: ServerMetrics?, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws(ConfigurationError) {
        var roots = LiveChainFetcher.TrustRoots.system
        if let caFile = configuration.caFile {
            do {
                roots = try LiveChainFetcher.TrustRoots.file(caFile)
            } catch {
                throw ConfigurationError(message: "monitoring: 'caFile': \(error)")
            }
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        self.configuration = configuration
        self.source = source
        self.checker = HostChecker(
            // The hosts were named by admins: where their names lead is judged as for the checks admins start.
            fetcher: LiveChainFetcher(
                roots: roots, timeout: .milliseconds(Int64(configuration.timeoutSeconds * 1000)), group: group, addressPolicy: configuration.addressPolicy
            ),
            connectTo: configuration.connectTo,
            expiryWarningDays: configuration.expiryWarningDays
        )
        self.metrics = metrics
        self.logger = logger
        self.now = now
    }

    public var report: Report { reportBox.withLock { $0 } }

    /// The chain each monitored host served at the latest check that reached it.
    public var servedChains: ServedChains { servedChainsBox.withLock { $0 } }

    /// Starts the schedule: a pass now, then one every `intervalSeconds` from the start of the previous one.
    public func start() {
        let interval = Duration.milliseconds(Int64(configuration.intervalSeconds * 1000))
        let task = Task.detached { [self] in
            while !Task.isCancelled {
                let started = ContinuousClock.now
                await runPass()
                try? await Task.sleep(until: started + interval, clock: .continuous)
            }
        }
        loop.withLock { $0 = task }
    }

    /// Stops the schedule: no new check starts, the ones waiting for a handshake are abandoned (their
    /// connections closed), and the monitor's event loop is shut down.
    public func stop() async {
        let task = loop.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        try? await group.shutdownGracefully()
    }

    /// Checks every host once and records the results.
    public func runPass() async {
        let started = now()
        let clock = ContinuousClock.now
        let jobs: [HostCheckJob]
        do {
            jobs = try await readJobs()
        } catch is CancellationError {
            return
        } catch {
            logger.error("Host monitoring could not read the hosts to check", metadata: ["error": "\(error)"])
            reportBox.withLock { $0.lastError = "\(error)" }
            return
        }
        let checked = await checker.check(jobs, concurrency: configuration.concurrency)
        // Stopped mid-pass: the checks that did not run say nothing about their hosts.
        guard !Task.isCancelled else { return }
        // A chain is kept only for a host with a publish window, the one thing a pass may hold a pin for; the
        // ledger keeps results without it (at 100,000 hosts every chain would cost tens of MiB).
        let windowed: @Sendable (HostPins) -> Bool = { host in host.storedPins.contains { $0.window != nil } }
        let results = checked.map { result in
            var kept = result
            kept.chain = []
            return kept
        }
        let duration = ContinuousClock.now - clock
        let completed = now()
        let (changes, counts) = reportBox.withLock { report in
            let changes = report.ledger.record(results, at: completed)
            report.passes += 1
            report.lastPassStartedAt = started
            report.lastPassCompletedAt = completed
            report.lastPassDuration = duration
            report.lastError = nil
            return (changes, report.ledger.counts)
        }
        servedChainsBox.withLock { served in
            served.keepOnly(jobs.filter { $0.unmonitoredReason == nil && windowed($0.host) }.map { ($0.customer, $0.host.hostname) })
            for result in checked where windowed(result.host) { served.record(result.chain, of: result.host.hostname, of: result.customer, at: completed) }
        }
        metrics?.recordMonitorPass(counts: counts, duration: duration)
        for change in changes { log(change) }
    }

    /// Reads the hosts on `storeQueue`: a store read blocks its thread, for as long as the answer timeout while
    /// the database does not answer, and must not hold one of the few threads Swift concurrency shares. A
    /// stopped monitor stops waiting for the read at once; the read finishes on its queue unobserved.
    private func readJobs() async throws -> [HostCheckJob] {
        let pending = OnceResumedContinuation<[HostCheckJob]>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard pending.install(continuation) else { return }
                storeQueue.async { [source] in
                    pending.resume(with: Result { try source.monitoringJobs() })
                }
            }
        } onCancel: {
            pending.resume(with: .failure(CancellationError()))
        }
    }

    private func log(_ change: MonitorLedger.StateChange) {
        let metadata: Logger.Metadata = [
            "customer": "\(change.customer)", "host": "\(change.hostname)", "port": "\(change.port)",
            "from": "\(change.from?.rawValue ?? "unchecked")", "to": "\(change.to.rawValue)", "detail": "\(change.detail)",
        ]
        if change.to.isFailing {
            logger.warning("Monitored host changed state", metadata: metadata)
        } else {
            logger.notice("Monitored host changed state", metadata: metadata)
        }
    }
}
