import Foundation
import Logging
import PinsetStatus
import PinsetStore

/// The hosts in report-only mode: a host whose pins apps do not enforce stays in front of whoever watches the
/// servers until its window ends.
public typealias ReportOnlyWatch = StoreListWatch<ReportOnlyWindow>

extension StoreListWatch where Item == ReportOnlyWindow {
    public convenience init(store: PinStore, interval: Duration = .seconds(2), metrics: ServerMetrics?, logger: Logger) {
        self.init(
            label: "pinset.report-only-watch", interval: interval, logger: logger,
            failure: "Could not read the report-only hosts; /status shows the last list read",
            fetch: { try store.reportOnlyWindows() },
            identity: { "\($0.customer)/\($0.hostname)/\($0.until)" },
            announce: { window in
                logger.warning("A host is in report-only mode: Pinset clients do not enforce its pins until the window ends", metadata: [
                    "customer": "\(window.customer)", "host": "\(window.hostname)", "until": "\(window.untilDate.formatted(.iso8601))",
                    "set_by": "\(window.setBy)",
                ])
            },
            publish: { windows in metrics?.recordReportOnly(hosts: windows.count, latestEnd: windows.map(\.until).max()) })
    }

    /// The hosts in report-only mode as of the last read, by customer and host name.
    public var windows: [ReportOnlyWindow] { items }
}

extension ServerStatus.ReportOnlyHost {
    init(_ window: ReportOnlyWindow) {
        self.init(customer: window.customer.rawValue, hostname: window.hostname.spelling, until: window.untilDate, setBy: window.setBy, since: window.since)
    }
}
