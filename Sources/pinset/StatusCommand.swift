import ArgumentParser
import Foundation
import PinsetStatus
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Ask a running server for its view: customers served, last signing pass, errors, readiness."
    )

    @Option(help: "The server's base URL.") var url: String = "http://127.0.0.1:8080"
    @Flag(help: "Print the raw JSON.") var json = false

    func run() async throws {
        guard let base = URL(string: url), let statusURL = URL(string: "status", relativeTo: base.appendingPathComponent("/")) else {
            throw CLIError("'\(url)' is not a URL. Example: --url http://127.0.0.1:8080")
        }
        var request = URLRequest(url: statusURL)
        request.timeoutInterval = 10
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw CLIError("Could not reach the server at \(statusURL.absoluteString): \(error.localizedDescription). Is 'pinset serve' running there?")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 404 {
            // A server with an admin listener answers 404 for /status on its public port.
            throw CLIError("The server at \(url) has no /status: a server with an admin listener serves /status only there. Pass the admin listener's address (its \"admin\" setting or --admin-port), for example --url http://127.0.0.1:9090.")
        }
        guard status == 200 else {
            throw CLIError("The server at \(url) answered /status with HTTP status \(status) instead of its status report.")
        }
        if json {
            print(String(decoding: data, as: UTF8.self), terminator: "")
            return
        }
        guard let report = try? ServerStatus.decode(data) else {
            throw CLIError("The server at \(url) answered /status with something other than a JSON object; is it a Pinset server?")
        }
        if let version = report.version { Output.line("version:              \(version)") }
        Output.line("ready:                \(report.ready ? "yes" : "NO — \(report.notReadyReason ?? "")")")
        Output.line("customers served:     \(report.customers)")
        Output.line("last signing pass:    \(report.lastSigningPass.map(Self.timestamp) ?? "never") (\(report.lastSigningPassMilliseconds.map(String.init) ?? "-") ms)")
        Output.line("oldest bundle age:    \(report.oldestBundleAgeSeconds.map(String.init) ?? "-") s")
        Output.line("signing failures:     \(report.consecutiveSigningFailures) in a row")
        if let store = report.store, !store.available {
            Output.line("STORE UNAVAILABLE:    since \(store.unavailableSince.map(Self.timestamp) ?? "?"); re-signing the content loaded at \(store.contentLoadedAt.map(Self.timestamp) ?? "never")")
            if let error = store.error { Output.line("  store error:        \(error)") }
        }
        if let error = report.lastSigningError { Output.line("last signing error:   \(error)") }
        for failure in report.customersNotSigned ?? [] {
            Output.line("NOT SIGNED:           \(failure.customer) — \(failure.reason)")
        }
        for identity in report.signingIdentities {
            Output.line("signing identity:     \(identity.identity)")
            Output.line("  signer expires:     \(Self.expiry(notAfter: identity.signerNotAfter, secondsLeft: identity.signerExpiresInSeconds, soon: identity.signerExpiresSoon, warningDays: identity.signerWarningDays))")
            Output.line("  root expires:       \(Self.expiry(notAfter: identity.rootNotAfter, secondsLeft: identity.rootExpiresInSeconds, soon: identity.rootExpiresSoon, warningDays: identity.rootWarningDays))")
            if let floor = identity.signersNotBefore {
                Output.line("  signers not before: \(Output.date(Date(timeIntervalSince1970: TimeInterval(floor)))) (revocation floor)")
            }
        }
        if let list = report.publicSuffixList {
            let version = [list.version, list.commit.map { "commit \($0)" }].compactMap { $0 }.joined(separator: ", ")
            Output.line("public suffix list:   \(list.source), \(version.isEmpty ? "no version in its header" : version) (\(list.rules) rules)")
        }
        if let log = report.transparencyLog {
            let served = log.checkpointSize.map { "checkpoint of \($0) entries, root \(log.rootHash ?? "?")" } ?? "no checkpoint served yet"
            Output.line("transparency log:     \(log.origin), \(served)")
            if log.entriesAwaitingWitnesses > 0 {
                Output.line("  awaiting witnesses: \(log.entriesAwaitingWitnesses) entries not yet cosigned by the quorum; their content is not served")
            }
            for (witness, reason) in log.witnessFailures.sorted(by: { $0.key < $1.key }) {
                Output.line("  witness \(witness): \(reason)")
            }
        }
        for host in report.reportOnly ?? [] {
            Output.line("REPORT-ONLY:          \(host.hostname) of '\(host.customer)' until \(Self.timestamp(host.until)) (set by \(host.setBy) at \(Self.timestamp(host.since)))")
        }
        for warning in report.warnings { Output.line("warning:              \(warning)") }
        if let monitoring = report.monitoring { Self.printMonitoring(monitoring) }
        for line in UptakeStatusLines.lines(from: report.uptake) { Output.line(line) }
        for line in ReportStatusLines.lines(from: report.reports) { Output.line(line) }
        if !report.ready { throw ExitCode(2) }
    }

    /// `2026-12-01T00:00:00Z, in 37 days (5 h)`, marked when inside the server's warning window for the role.
    static func expiry(notAfter: Date, secondsLeft: Int64, soon: Bool, warningDays: Int) -> String {
        let seconds = Int(secondsLeft)
        let left = seconds < 0 ? "EXPIRED \(Self.duration(-seconds)) ago" : "in \(Self.duration(seconds))"
        return "\(timestamp(notAfter)), \(left)\(soon ? "  <-- RENEW SOON (warned from \(warningDays) days before)" : "")"
    }

    static func duration(_ seconds: Int) -> String {
        seconds >= 86_400 ? "\(seconds / 86_400) days" : seconds >= 3600 ? "\(seconds / 3600) h" : "\(seconds) s"
    }

    /// A date as the server wrote it.
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// The server's live-chain monitoring: counts by state, then every host not in state `matches`.
    static func printMonitoring(_ monitoring: ServerStatus.Monitoring) {
        guard monitoring.enabled else {
            Output.line("host monitoring:      off (set 'monitoring' in the server configuration)")
            return
        }
        // Before any pass completed too: a monitor that cannot read its hosts never completes one.
        if let error = monitoring.lastError { Output.line("monitoring error:     \(error)") }
        guard let completed = monitoring.lastPassCompleted else {
            Output.line("host monitoring:      first pass not finished yet")
            return
        }
        let counts = monitoring.counts ?? [:]
        let order = ["matches", "live-key-is-next", "matches-only-backup", "expiring-without-next-key", "sole-key-expiring", "matches-nothing", "unreachable", "unmonitored"]
        let known = order.filter { counts[$0] != nil } + counts.keys.sorted().filter { !order.contains($0) }
        Output.line("host monitoring:      last pass \(timestamp(completed)) (\(monitoring.lastPassMilliseconds.map(String.init) ?? "-") ms)")
        Output.line("hosts by state:       " + known.map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", "))
        for host in monitoring.hosts ?? [] {
            let label = host.failing ? "HOST FAILING:" : "host:"
            Output.line("\(label.padding(toLength: 22, withPad: " ", startingAt: 0))\(host.customer) \(host.hostname):\(host.port) \(host.state) since \(timestamp(host.since)) — \(host.detail)")
        }
    }
}
