import Foundation

/// Where and how a client reports pin failures to the trust server's reports listener. Reporting is off unless
/// ``PinsetClientConfiguration/failureReports`` holds one of these with ``isEnabled`` true.
///
/// A report names the host, the chain it was served, the pins the app held and their content version, the app's
/// bundle id and version, and a random installation id kept in the state directory (never a device identifier).
public struct PinFailureReportConfiguration: Sendable {
    /// `URL` — where reports are POSTed, e.g. `https://reports.example.com/report/acme`. Sent over a connection
    /// that uses the platform's trust roots only, never the pins: the pins just failed.
    public var reportURL: URL
    /// `String` — the app's bundle identifier (`app-bundle-id`).
    public var appBundleID: String
    /// `String` — the app's version (`app-version`), at most 64 bytes.
    public var appVersion: String
    /// `Bool`, default true — false turns reporting off (an app setting, a user's choice) without losing the queue.
    public var isEnabled = true
    /// `Duration`, default 1 hour — at most one report per host in this interval, across restarts.
    public var perHostInterval: Duration = .seconds(3600)
    /// `Int`, default 20 — reports kept for later when they cannot be sent; the oldest are dropped beyond it.
    public var maximumQueuedReports = 20
    /// `Int`, default 256 KiB — bound on the queue file; the oldest reports are dropped beyond it.
    public var maximumQueueBytes = 256 * 1024
    /// `Duration`, default 10 s — the limit for sending one report.
    public var sendTimeout: Duration = .seconds(10)

    public init(reportURL: URL, appBundleID: String, appVersion: String) {
        self.reportURL = reportURL
        self.appBundleID = appBundleID
        self.appVersion = appVersion
    }
}
