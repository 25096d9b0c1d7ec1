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
        do {
            (data, _) = try await URLSession.shared.data(for: request)
        } catch {
            throw CLIError("Could not reach the server at \(statusURL.absoluteString): \(error.localizedDescription). Is 'pinset serve' running there?")
        }
        if json {
            print(String(decoding: data, as: UTF8.self), terminator: "")
            return
        }
        guard let report = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CLIError("The server at \(url) answered /status with something other than a JSON object.")
        }
        let ready = report["ready"] as? Bool ?? false
        Output.line("ready:                \(ready ? "yes" : "NO — \(report["notReadyReason"] ?? "")")")
        Output.line("customers served:     \(report["customers"] ?? 0)")
        Output.line("last signing pass:    \(report["lastSigningPass"] ?? "never") (\(report["lastSigningPassMilliseconds"] ?? "-") ms)")
        Output.line("oldest bundle age:    \(report["oldestBundleAgeSeconds"] ?? "-") s")
        Output.line("signing failures:     \(report["consecutiveSigningFailures"] ?? 0) in a row")
        if let error = report["lastSigningError"] { Output.line("last signing error:   \(error)") }
        for failure in report["customersNotSigned"] as? [[String: Any]] ?? [] {
            Output.line("NOT SIGNED:           \(failure["customer"] ?? "?") — \(failure["reason"] ?? "")")
        }
        for warning in report["warnings"] as? [String] ?? [] { Output.line("warning:              \(warning)") }
        for line in UptakeStatusLines.lines(from: report) { Output.line(line) }
        if !ready { throw ExitCode(2) }
    }
}
