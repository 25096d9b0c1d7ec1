import PinsetCore
import Prometheus

/// The uptake gauges: a few series per customer (customers are bounded by the operator), never one per
/// version, whatever versions clients report.
final class UptakeMetrics: Sendable {
    private struct Series: Sendable {
        let fetches: Gauge
        let unknown: Gauge
        let shareOnLatest: Gauge
        let oldestVersion: Gauge
    }

    private let registry: PrometheusCollectorRegistry
    private let series = LockedValue<[CustomerName: Series]>([:])

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Sets every customer's gauges from `summaries` and removes the series of customers no longer in it, so a
    /// scrape shows the last hour of this instance and nothing stale.
    func record(_ summaries: [CustomerName: UptakeSummary]) {
        series.withLock { all in
            for (customer, gone) in all where summaries[customer] == nil {
                for gauge in [gone.fetches, gone.unknown, gone.shareOnLatest, gone.oldestVersion] { registry.unregisterGauge(gauge) }
                all[customer] = nil
            }
            for (customer, summary) in summaries {
                let customerSeries = all[customer] ?? makeSeries(customer)
                all[customer] = customerSeries
                customerSeries.fetches.set(Double(summary.fetches))
                customerSeries.unknown.set(Double(summary.unknown))
                // -1 when there is no share (no fetch reported a version, or nothing is served now): a gauge has
                // no "absent", and 0 would read as "nobody updated".
                customerSeries.shareOnLatest.set(summary.shareOnLatest ?? -1)
                customerSeries.oldestVersion.set(summary.oldestVersion.map(Double.init) ?? -1)
            }
        }
    }

    private func makeSeries(_ customer: CustomerName) -> Series {
        let labels = [("customer", customer.rawValue)]
        return Series(
            fetches: gauge("fetches", help: "Bundle fetches in the last hour served by this instance.", labels: labels),
            unknown: gauge("unknown_version_fetches", help: "Fetches of the last hour that reported no valid Pinset-Version.", labels: labels),
            shareOnLatest: gauge("share_on_latest", help: "Of the last hour's fetches that reported a version, the share on the version served now; -1 when none reported or nothing is served.", labels: labels),
            oldestVersion: gauge("oldest_version", help: "The oldest content version reported in the last hour; -1 when none reported.", labels: labels)
        )
    }

    private func gauge(_ name: String, help: String, labels: [(String, String)]) -> Gauge {
        registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "pinset", subsystem: "uptake", metricName: name, unitName: "", helpText: help), labels: labels)
    }
}
