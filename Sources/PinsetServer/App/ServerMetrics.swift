import CoreMetrics
import Foundation
import Metrics
import PinsetCore
import PinsetLiveCheck
import PinsetPublishing
import PinsetSigning
import Prometheus

private typealias Counter = CoreMetrics.Counter
private typealias Gauge = CoreMetrics.Gauge

/// The server's metrics, recorded through swift-metrics into a Prometheus registry owned by this server (not
/// the process-global bootstrap, so that several servers — or tests — can run in one process).
public final class ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let bundlesSigned: Counter
    private let signingFailures: Counter
    private let unreadableBundles: Counter
    private let signingDuration: Metrics.Timer
    private let requestDuration: Metrics.Timer
    private let responseBytes: Counter
    private let openConnections: Gauge
    private let oldestBundleAge: Gauge
    private let customersNotSigned: Gauge
    private let refusedPerAddress: Counter
    private let refusedServerFull: Counter
    private let evictions: Counter
    private let idleClosed: Counter
    private let refusedOutOfDescriptors: Counter
    private let acceptPauses: Counter
    private let refusedInvalidProxyHeader: Counter
    private let refusedUntrustedProxy: Counter
    private let requestCounters = LockedValue<[Int: Counter]>([:])
    private let signerExpiry: Gauge
    private let rootExpiry: Gauge
    private let identityExpiry = LockedValue(SigningIdentityExpiry())
    private let monitoredHosts: [HostCheckState: Gauge]
    private let monitorPassDuration: Gauge
    private let monitorPasses: Counter
    private let storeUp: Gauge
    private let storeUnavailableSince: Gauge
    private let openConnectionsSource = LockedValue<(@Sendable () -> Int)?>(nil)
    private let unacknowledgedBreakGlass: Gauge
    private let reportOnlyHosts: Gauge
    private let reportOnlyLatestEnd: Gauge
    /// Per-customer uptake gauges, refreshed at scrape time.
    let uptake: UptakeMetrics
    /// Pin-failure reports by outcome.
    public let reports: ReportMetrics

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5), .seconds(30),
        ]
        self.registry = registry
        self.factory = factory
        bundlesSigned = Counter(label: "pinset_bundles_signed_total", factory: factory)
        signingFailures = Counter(label: "pinset_signing_failures_total", factory: factory)
        unreadableBundles = Counter(label: "pinset_bundle_read_failures_total", factory: factory)
        signingDuration = Metrics.Timer(label: "pinset_signing_pass_duration_seconds", factory: factory)
        requestDuration = Metrics.Timer(label: "pinset_http_request_duration_seconds", factory: factory)
        responseBytes = Counter(label: "pinset_http_response_body_bytes_total", factory: factory)
        openConnections = Gauge(label: "pinset_http_open_connections", factory: factory)
        oldestBundleAge = Gauge(label: "pinset_oldest_bundle_age_seconds", factory: factory)
        customersNotSigned = Gauge(label: "pinset_customers_not_signed", factory: factory)
        refusedPerAddress = Counter(label: "pinset_http_connections_refused_total", dimensions: [("reason", "per_address_limit")], factory: factory)
        refusedServerFull = Counter(label: "pinset_http_connections_refused_total", dimensions: [("reason", "server_full")], factory: factory)
        evictions = Counter(label: "pinset_http_connections_evicted_total", factory: factory)
        idleClosed = Counter(label: "pinset_http_idle_connections_closed_total", factory: factory)
        refusedOutOfDescriptors = Counter(label: "pinset_http_connections_refused_total", dimensions: [("reason", "out_of_descriptors")], factory: factory)
        acceptPauses = Counter(label: "pinset_http_accept_pauses_total", factory: factory)
        refusedInvalidProxyHeader = Counter(label: "pinset_http_connections_refused_total", dimensions: [("reason", "invalid_proxy_header")], factory: factory)
        refusedUntrustedProxy = Counter(label: "pinset_http_connections_refused_total", dimensions: [("reason", "untrusted_proxy")], factory: factory)
        signerExpiry = Gauge(label: "pinset_signer_certificate_expiry_seconds", factory: factory)
        rootExpiry = Gauge(label: "pinset_root_certificate_expiry_seconds", factory: factory)
        uptake = UptakeMetrics(registry: registry)
        reports = ReportMetrics(factory: factory)
        // One series per state, never per host: the hosts themselves are in /status.
        monitoredHosts = Dictionary(uniqueKeysWithValues: HostCheckState.allCases.map {
            ($0, Gauge(label: "pinset_monitored_hosts", dimensions: [("state", $0.rawValue)], factory: factory))
        })
        monitorPassDuration = Gauge(label: "pinset_monitor_pass_duration_seconds", factory: factory)
        monitorPasses = Counter(label: "pinset_monitor_passes_total", factory: factory)
        storeUp = Gauge(label: "pinset_store_up", factory: factory)
        storeUnavailableSince = Gauge(label: "pinset_store_unavailable_since_timestamp_seconds", factory: factory)
        unacknowledgedBreakGlass = Gauge(label: "pinset_break_glass_unacknowledged", factory: factory)
        reportOnlyHosts = Gauge(label: "pinset_report_only_hosts", factory: factory)
        reportOnlyLatestEnd = Gauge(label: "pinset_report_only_latest_end_timestamp_seconds", factory: factory)
        // The Prometheus convention for which build runs: a constant 1 with the version as a label.
        Gauge(label: "pinset_build_info", dimensions: [("version", PinsetRelease.version)], factory: factory).record(1)
        storeUp.record(1)
        storeUnavailableSince.record(0)
        unacknowledgedBreakGlass.record(0)
        reportOnlyHosts.record(0)
        reportOnlyLatestEnd.record(0)
    }

    /// Hosts per state after a monitoring pass, and how long the pass took.
    func recordMonitorPass(counts: [HostCheckState: Int], duration: Duration) {
        for (state, gauge) in monitoredHosts { gauge.record(counts[state] ?? 0) }
        monitorPassDuration.record(Double(duration.nanoseconds) / 1e9)
        monitorPasses.increment()
    }

    /// The earliest signer and root expiry of the last pass; exported as seconds left at scrape time
    /// (negative once expired), one series per role whatever the number of identities.
    func recordIdentityExpiry(_ expiry: SigningIdentityExpiry) {
        identityExpiry.withLock { $0 = expiry }
    }

    func recordSigningPass(bundles: Int, duration: Duration) {
        bundlesSigned.increment(by: bundles)
        signingDuration.recordNanoseconds(duration.nanoseconds)
    }

    /// Customers the last pass could not sign (their signing identity is unusable); 0 when all were signed.
    func recordCustomersNotSigned(_ count: Int) {
        customersNotSigned.record(count)
    }

    func recordSigningFailure() {
        signingFailures.increment()
    }

    /// A bundle whose file could not be read, answered 503.
    func recordUnreadableBundle() {
        unreadableBundles.increment()
    }

    func recordRequest(status: Int, bodyBytes: Int, duration: Duration) {
        let counter = requestCounters.withLock { counters in
            if let existing = counters[status] { return existing }
            let created = Counter(label: "pinset_http_requests_total", dimensions: [("status", String(status))], factory: factory)
            counters[status] = created
            return created
        }
        counter.increment()
        responseBytes.increment(by: bodyBytes)
        requestDuration.recordNanoseconds(duration.nanoseconds)
    }

    func recordConnectionLimit(_ event: ConnectionLimitEvent) {
        switch event {
        case .refusedPerAddress: refusedPerAddress.increment()
        case .refusedServerFull: refusedServerFull.increment()
        case .evicted: evictions.increment()
        case .idleClosed: idleClosed.increment()
        case .shedForDescriptors: refusedOutOfDescriptors.increment()
        case .acceptPaused: acceptPauses.increment()
        case .invalidProxyHeader: refusedInvalidProxyHeader.increment()
        case .untrustedProxy: refusedUntrustedProxy.increment()
        }
    }

    /// 1 while the store answers; while not, 0 and the Unix time the outage began (0 while up).
    func recordStoreAvailability(unavailableSince: Date?) {
        storeUp.record(unavailableSince == nil ? 1 : 0)
        storeUnavailableSince.record(unavailableSince.map { Int64($0.timeIntervalSince1970) } ?? 0)
    }

    /// Pin edits applied without review that no second admin has acknowledged yet.
    func recordUnacknowledgedBreakGlass(_ count: Int) {
        unacknowledgedBreakGlass.record(count)
    }

    /// Hosts in report-only mode (one series, never per host: the hosts are in /status), and the latest end of
    /// their windows (0 when none).
    func recordReportOnly(hosts: Int, latestEnd: Int64?) {
        reportOnlyHosts.record(hosts)
        reportOnlyLatestEnd.record(latestEnd ?? 0)
    }

    /// Where the open-connections gauge reads its value, at scrape time.
    func countOpenConnections(_ count: @escaping @Sendable () -> Int) {
        openConnectionsSource.withLock { $0 = count }
    }

    /// Renders the Prometheus text exposition, refreshing the gauges that are computed at scrape time.
    func render(oldestBundleTimestamp: Int64?, now: Date) -> [UInt8] {
        if let oldest = oldestBundleTimestamp {
            oldestBundleAge.record(max(0, now.timeIntervalSince1970 - Double(oldest)))
        }
        let expiry = identityExpiry.withLock { $0 }
        if let signer = expiry.signer { signerExpiry.record(signer.timeIntervalSince(now)) }
        if let root = expiry.root { rootExpiry.record(root.timeIntervalSince(now)) }
        if let count = openConnectionsSource.withLock({ $0 }) { openConnections.record(count()) }
        return registry.emitToBuffer()
    }
}
