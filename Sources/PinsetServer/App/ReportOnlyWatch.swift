import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetStatus
import PinsetStore

/// Keeps the hosts in report-only mode, read from the store every few seconds, for `/status` and the metrics: a
/// host whose pins apps do not enforce stays in front of whoever watches the servers until its window ends. Off
/// the request path; a failed read keeps the last list (the store's own outage shows in `/status` already).
public final class ReportOnlyWatch: Sendable {
    private let store: PinStore
    private let metrics: ServerMetrics?
    private let logger: Logger
    private let current = LockedValue<[ReportOnlyWindow]>([])
    private let schedule = LockedValue<RepeatingTask?>(nil)

    public init(store: PinStore, interval: Duration = .seconds(2), metrics: ServerMetrics?, logger: Logger) {
        self.store = store
        self.metrics = metrics
        self.logger = logger
        let task = RepeatingTask(
            label: "pinset.report-only-watch", interval: interval, logger: logger,
            failure: "Could not read the report-only hosts; /status shows the last list read"
        ) { [weak self] in try self?.read() }
        schedule.withLock { $0 = task }
    }

    /// The hosts in report-only mode as of the last read, by customer and host name.
    public var windows: [ReportOnlyWindow] { current.withLock { $0 } }

    /// Reads now, then on every interval.
    public func start() {
        schedule.withLock { $0 }?.start()
    }

    public func stop() {
        schedule.withLock { $0 }?.stop()
    }

    func read() throws {
        let windows = try store.reportOnlyWindows()
        let known = Set(current.withLock { $0 }.map { "\($0.customer)/\($0.hostname)/\($0.until)" })
        for window in windows where !known.contains("\(window.customer)/\(window.hostname)/\(window.until)") {
            logger.warning("A host is in report-only mode: Pinset clients do not enforce its pins until the window ends", metadata: [
                "customer": "\(window.customer)", "host": "\(window.hostname)", "until": "\(window.untilDate.formatted(.iso8601))", "set_by": "\(window.setBy)",
            ])
        }
        current.withLock { $0 = windows }
        metrics?.recordReportOnly(hosts: windows.count, latestEnd: windows.map(\.until).max())
    }
}

/// The report-only watch as a background service.
struct ReportOnlyWatchService: BackgroundService {
    let watch: ReportOnlyWatch

    func start() {
        watch.start()
    }

    func shutdown() async {
        // `stop` waits for a store read in progress: on a Dispatch thread, not a cooperative one.
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                watch.stop()
                stopped.resume()
            }
        }
    }
}

extension ServerStatus.ReportOnlyHost {
    init(_ window: ReportOnlyWindow) {
        self.init(customer: window.customer.rawValue, hostname: window.hostname.spelling, until: window.untilDate, setBy: window.setBy, since: window.since)
    }
}
