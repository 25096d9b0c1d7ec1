import CoreMetrics
import Metrics

/// `pinset_reports_received_total{outcome}`: one series per ``ReportOutcome``, whatever the reports say.
/// Requests the protocol layer refuses before the handler (413, malformed HTTP) are counted only in
/// `pinset_http_requests_total{status}`.
public final class ReportMetrics: Sendable {
    private let received: [ReportOutcome: CoreMetrics.Counter]

    init(factory: any MetricsFactory) {
        received = Dictionary(uniqueKeysWithValues: ReportOutcome.allCases.map {
            ($0, CoreMetrics.Counter(label: "pinset_reports_received_total", dimensions: [("outcome", $0.rawValue)], factory: factory))
        })
    }

    func record(_ outcome: ReportOutcome) {
        received[outcome]?.increment()
    }
}
