import ArgumentParser
import Foundation
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
        guard let report = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw CLIError("The server at \(url) answered /status with something other than a JSON object; is it a Pinset server?")
        }
        let ready = report["ready"] as? Bool ?? false
        Output.line("ready:                \(ready ? "yes" : "NO — \(report["notReadyReason"] ?? "")")")
        Output.line("customers served:     \(report["customers"] ?? 0)")
        Output.line("last signing pass:    \(report["lastSigningPass"] ?? "never") (\(report["lastSigningPassMilliseconds"] ?? "-") ms)")
        Output.line("oldest bundle age:    \(report["oldestBundleAgeSeconds"] ?? "-") s")
        Output.line("signing failures:     \(report["consecutiveSigningFailures"] ?? 0) in a row")
        if let store = report["store"] as? [String: Any], store["available"] as? Bool == false {
            Output.line("STORE UNAVAILABLE:    since \(store["unavailableSince"] ?? "?"); re-signing the content loaded at \(store["contentLoadedAt"] ?? "never")")
            if let error = store["error"] { Output.line("  store error:        \(error)") }
        }
        if let error = report["lastSigningError"] { Output.line("last signing error:   \(error)") }
        for failure in report["customersNotSigned"] as? [[String: Any]] ?? [] {
            Output.line("NOT SIGNED:           \(failure["customer"] ?? "?") — \(failure["reason"] ?? "")")
        }
        for identity in report["signingIdentities"] as? [[String: Any]] ?? [] {
            Output.line("signing identity:     \(identity["identity"] ?? "?")")
            Output.line("  signer expires:     \(Self.expiry(identity, role: "signer"))")
            Output.line("  root expires:       \(Self.expiry(identity, role: "root"))")
            if let floor = identity["signersNotBefore"] as? Int {
                Output.line("  signers not before: \(Output.date(Date(timeIntervalSince1970: TimeInterval(floor)))) (revocation floor)")
            }
        }
        for warning in report["warnings"] as? [String] ?? [] { Output.line("warning:              \(warning)") }
        if let monitoring = report["monitoring"] as? [String: Any] { Self.printMonitoring(monitoring) }
        for line in UptakeStatusLines.lines(from: report) { Output.line(line) }
        for line in ReportStatusLines.lines(from: report) { Output.line(line) }
        if !ready { throw ExitCode(2) }
    }

    /// `2026-12-01T00:00:00Z, in 37 days (5 h)`, marked when inside the server's warning window for the role.
    static func expiry(_ identity: [String: Any], role: String) -> String {
        let date = identity["\(role)NotAfter"] as? String ?? "?"
        guard let seconds = identity["\(role)ExpiresInSeconds"] as? Int else { return date }
        let left = seconds < 0 ? "EXPIRED \(Self.duration(-seconds)) ago" : "in \(Self.duration(seconds))"
        let soon = identity["\(role)ExpiresSoon"] as? Bool ?? false
        let window = identity["\(role)WarningDays"].map { " (warned from \($0) days before)" } ?? ""
        return "\(date), \(left)\(soon ? "  <-- RENEW SOON\(window)" : "")"
    }

    static func duration(_ seconds: Int) -> String {
        seconds >= 86_400 ? "\(seconds / 86_400) days" : seconds >= 3600 ? "\(seconds / 3600) h" : "\(seconds) s"
    }

    /// The server's live-chain monitoring: counts by state, then every host not in state `matches`.
    static func printMonitoring(_ monitoring: [String: Any]) {
        guard monitoring["enabled"] as? Bool == true else {
            Output.line("host monitoring:      off (set 'monitoring' in the server configuration)")
            return
        }
        // Before any pass completed too: a monitor that cannot read its hosts never completes one.
        if let error = monitoring["lastError"] { Output.line("monitoring error:     \(error)") }
        guard let completed = monitoring["lastPassCompleted"] else {
            Output.line("host monitoring:      first pass not finished yet")
            return
        }
        let counts = monitoring["counts"] as? [String: Int] ?? [:]
        let order = ["matches", "matches-only-backup", "sole-key-expiring", "matches-nothing", "unreachable", "unmonitored"]
        let known = order.filter { counts[$0] != nil } + counts.keys.sorted().filter { !order.contains($0) }
        Output.line("host monitoring:      last pass \(completed) (\(monitoring["lastPassMilliseconds"] ?? "-") ms)")
        Output.line("hosts by state:       " + known.map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", "))
        for host in monitoring["hosts"] as? [[String: Any]] ?? [] {
            let failing = host["failing"] as? Bool == true
            let label = failing ? "HOST FAILING:" : "host:"
            Output.line("\(label.padding(toLength: 22, withPad: " ", startingAt: 0))\(host["customer"] ?? "?") \(host["hostname"] ?? "?"):\(host["port"] ?? "?") \(host["state"] ?? "?") since \(host["since"] ?? "?") — \(host["detail"] ?? "")")
        }
    }
}
