import Foundation
import PinsetCore

/// Where and how a client reports pin failures to the trust server's reports listener. Reporting is off unless
/// ``PinsetClientConfiguration/failureReports`` holds one of these with ``isEnabled`` true.
///
/// A report names the host, the chain it was served, the pins the app held and their content version, the app's
/// bundle id and version, and a random installation id kept in the state directory (never a device identifier).
public struct PinFailureReportConfiguration: Sendable {
    /// `URL` — where reports are POSTed, e.g. `https://reports.example.com/report/acme`. Sent over a connection
    /// that uses the platform's trust roots only, never the pins: the pins just failed.
    public let reportURL: URL
    /// `String` — the app's bundle identifier (`app-bundle-id`), 1 to 256 bytes.
    public let appBundleID: String
    /// `String` — the app's version (`app-version`), 1 to 64 bytes.
    public let appVersion: String
    /// `Bool`, default true — false turns reporting off (an app setting, a user's choice) without losing the queue.
    public var isEnabled = true
    /// `Duration`, default 1 hour — at most one report per host in this interval, across restarts.
    public let perHostInterval: Duration
    /// `Int`, default 20 — reports kept for later when they cannot be sent; the oldest are dropped beyond it.
    public let maximumQueuedReports: Int
    /// `Int`, default 256 KiB — bound on the queued reports' bytes; the oldest are dropped beyond it.
    public let maximumQueueBytes: Int
    /// `Duration`, default 10 s — the limit for sending one report.
    public let sendTimeout: Duration

    /// - Throws: `InputError` naming the setting when a value would make every report be refused by the
    ///   server (an empty or overlong app id or version, text with control characters), when `reportURL` is not
    ///   an http(s) URL, when a queue bound is below 1, or when an interval is not positive.
    public init(
        reportURL: URL, appBundleID: String, appVersion: String, perHostInterval: Duration = .seconds(3600),
        maximumQueuedReports: Int = 20, maximumQueueBytes: Int = 256 * 1024, sendTimeout: Duration = .seconds(10)
    ) throws(InputError) {
        try Self.requireText(appBundleID, "appBundleID", maximumBytes: 256)
        try Self.requireText(appVersion, "appVersion", maximumBytes: 64)
        guard reportURL.scheme == "https" || reportURL.scheme == "http", reportURL.host != nil else {
            throw InputError("failureReports: reportURL \(reportURL) is not an http(s) URL. Give the trust server's reports URL, e.g. https://reports.example.com/report/acme.")
        }
        guard maximumQueuedReports >= 1, maximumQueueBytes >= 1 else {
            throw InputError("failureReports: maximumQueuedReports and maximumQueueBytes must be at least 1; got \(maximumQueuedReports) and \(maximumQueueBytes).")
        }
        guard perHostInterval > .zero, sendTimeout > .zero else {
            throw InputError("failureReports: perHostInterval and sendTimeout must be positive; got \(perHostInterval) and \(sendTimeout).")
        }
        self.reportURL = reportURL
        self.appBundleID = appBundleID
        self.appVersion = appVersion
        self.perHostInterval = perHostInterval
        self.maximumQueuedReports = maximumQueuedReports
        self.maximumQueueBytes = maximumQueueBytes
        self.sendTimeout = sendTimeout
    }

    /// The trust server refuses a report whose text members are empty where required, too long, or hold control
    /// characters; refusing them here says so where it can be fixed.
    private static func requireText(_ text: String, _ name: String, maximumBytes: Int) throws(InputError) {
        guard !text.isEmpty, text.utf8.count <= maximumBytes, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw InputError("failureReports: \(name) must be 1 to \(maximumBytes) bytes of text without control characters; got \(text.utf8.count) bytes.")
        }
    }
}
