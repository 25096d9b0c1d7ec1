import Foundation
import PinsetCore
import SwiftASN1
import X509

/// Turns pin failures into reports for the trust server (``PinFailureReport``, TrustKit's format with
/// `pinset-version`), at most one per host per ``PinFailureReportConfiguration/perHostInterval``, queued on disk
/// until sent.
///
/// Nothing here runs on the TLS path: ``PinEvaluator`` hands the failure over and returns its verdict at once;
/// building, storing and sending the report happen later on this actor. A report the server refuses for good
/// (a 4xx other than 408 and 429) is dropped; one that could not be delivered stays queued and is retried with
/// the next failure or ``sendPending()``. Reporting never changes the pins or the verdict.
public actor PinFailureReporter {
    public nonisolated let configuration: PinsetClientConfiguration
    public nonisolated let settings: PinFailureReportConfiguration
    private let sender: any PinFailureReportSender
    private let path: String
    private var queue: PinFailureReportQueue?
    private var sending = false

    public init(configuration: PinsetClientConfiguration, settings: PinFailureReportConfiguration,
                sender: any PinFailureReportSender = URLSessionPinFailureReportSender()) {
        self.configuration = configuration
        self.settings = settings
        self.sender = sender
        self.path = configuration.reportQueuePath
    }

    /// Reports waiting to be sent.
    public var pendingCount: Int { loadedQueue().pending.count }

    /// Queues a report of `event` unless its host was reported within the interval, then tries to send.
    public func record(_ event: PinFailureEvent) async {
        guard settings.isEnabled else { return }
        var queue = loadedQueue()
        let now = Int64(event.at.timeIntervalSince1970)
        let interval = Int64(settings.perHostInterval.components.seconds)
        queue.forgetReportsBefore(now - interval)
        if let last = queue.lastReported[event.host.rawValue], now - last < interval, now >= last { return }
        queue.lastReported[event.host.rawValue] = now
        let report = makeReport(event, installationID: queue.installationID)
        queue.append(String(decoding: report.json(), as: UTF8.self), maximumCount: settings.maximumQueuedReports, maximumBytes: settings.maximumQueueBytes)
        save(queue)
        await sendPending()
    }

    /// Sends the queued reports, oldest first, stopping at the first that cannot be delivered.
    public func sendPending() async {
        guard settings.isEnabled, !sending else { return }
        sending = true
        defer { sending = false }
        // Written once, after the loop: a crash in between at worst sends a report twice, which the server
        // counts once per installation and hour.
        var delivered = 0
        defer { if delivered > 0 { save(loadedQueue()) } }
        while let report = loadedQueue().pending.first {
            let accepted: Bool
            do {
                let status = try await sender.send(Array(report.utf8), to: settings.reportURL, timeout: settings.sendTimeout)
                // Accepted, or refused for good (a 4xx other than a timeout or rate limit); a redirect, a 5xx
                // and no answer leave it queued.
                accepted = (200..<300).contains(status) || ((400..<500).contains(status) && status != 408 && status != 429)
            } catch {
                accepted = false
            }
            guard accepted else { return }
            // `record` may have changed the queue while this one was sent.
            var queue = loadedQueue()
            if queue.pending.first == report { queue.pending.removeFirst() }
            self.queue = queue
            delivered += 1
        }
    }

    private func makeReport(_ event: PinFailureEvent, installationID: String) -> PinFailureReport {
        PinFailureReport(
            appBundleID: settings.appBundleID, appVersion: settings.appVersion, appVendorID: installationID,
            appPlatform: Self.platform, hostname: event.host.rawValue, port: Int(event.entry.port),
            notedHostname: event.entry.hostname.rawValue, includeSubdomains: event.entry.includeSubdomains, enforcePinning: true,
            validatedCertificateChain: event.chain.prefix(PinFailureReport.maximumChainLength).map(Self.pem),
            knownPins: event.entry.spkiSHA256.prefix(PinFailureReport.maximumKnownPins).map { "pin-sha256=\"\($0.base64)\"" },
            validationResult: PinFailureReport.noMatchingPin,
            dateTime: event.at.formatted(.iso8601), pinsetVersion: event.pinSetVersion
        )
    }

    static func pem(_ der: [UInt8]) -> String {
        PEMDocument(type: "CERTIFICATE", derBytes: der).pemString + "\n"
    }

    static var platform: String {
        #if os(iOS)
        "IOS"
        #elseif os(macOS)
        "MACOS"
        #elseif os(Linux)
        "LINUX"
        #else
        "OTHER"
        #endif
    }

    private func loadedQueue() -> PinFailureReportQueue {
        if let queue { return queue }
        let loaded = PinFailureReportQueue.load(from: path) ?? PinFailureReportQueue(installationID: UUID().uuidString)
        queue = loaded
        return loaded
    }

    /// Keeps `updated` in memory even when the file cannot be written: reporting is best effort.
    private func save(_ updated: PinFailureReportQueue) {
        queue = updated
        try? updated.save(to: path, stateDirectory: configuration.stateDirectory)
    }
}
