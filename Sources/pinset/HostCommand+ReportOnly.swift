import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetServer

extension HostCommand {
    /// `pinset host report-only`: the time-boxed switch for the night a host's pins and its live chain disagree.
    struct ReportOnly: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report-only",
            abstract: "Let Pinset clients connect to a host whose chain matches no pin until a time, reporting every mismatch.",
            discussion: """
                Until the window ends, Pinset clients evaluate the host's pins as usual, report a mismatch and let the \
                connection proceed after normal TLS validation; then they enforce again by themselves. At most 72 hours \
                (a server's reportOnlyMaximumHours may lower that); an operator's, or, where the customer requires \
                review, an editor's request that a reviewer approves ('pinset review approve ID'); always with a \
                reason; audited, and shown by /status, the metrics, 'pinset status' and the dashboard until it ends. \
                Legacy GCX clients cannot read the mode and keep enforcing the pins listed: see docs/report-only.md.
                """
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Option(help: ArgumentHelp("When the window ends: a duration from now (90m, 12h, 3d) or an ISO 8601 time with a zone (2026-11-28T06:00:00Z).", valueName: "time"))
        var until: String
        @Option(help: ArgumentHelp("Why pinning may not be enforced (required; the audit log, /status and the dashboard show it).", valueName: "text"))
        var reason: String
        @OptionGroup var bound: ReportOnlyBoundOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let end = try Admin.parseReportOnlyEnd(until, now: Date())
            // On this host too the token acts as its admin: an editor's window becomes a change request where the
            // customer requires review, as it does through the server.
            if let client = try remote.client(
                credentials, for: "host report-only", localOnly: [bound.given], tokenActsLocally: true
            ) {
                guard let until = Int(exactly: end), AdminLimits.reportOnlyEnd.contains(until) else {
                    throw AdminError("--until '\(TerminalText.escape(self.until))' lies outside \(AdminLimits.reportOnlyEnd).")
                }
                let answer = try await client.call(
                    .setReportOnly, ["customer": customer.rawValue, "hostname": host.rawValue],
                    body: AdminRequest.SetReportOnly(until: until, reason: reason), answer: AdminResponse.ReportOnly.self
                )
                return try Self.show(answer, json: options.json)
            }
            let maximumSeconds = try bound.maximumSeconds()
            let admin = try options.openAdmin()
            let principal = try credentials.authenticated(by: admin).map { AdminPrincipal.admin($0) } ?? admin.localOperator
            let outcome = try admin.setReportOnly(host, of: customer, until: end, reason: reason, maximumSeconds: maximumSeconds, by: principal)
            try Self.show(AdminDocuments.setReportOnly(outcome, hostname: host, of: customer, until: end, reason: reason), json: options.json)
        }

        static func show(_ answer: AdminResponse.ReportOnly, json: Bool) throws {
            if json { return try Output.json(answer) }
            if let request = answer.changeRequest {
                return Output.note("Change request \(request.id) opened for '\(request.customer)': \(answer.hostname) stays enforcing until another admin with the reviewer role approves it with 'pinset review approve \(request.id)'. It expires \(request.expiresAt), when the window would end.")
            }
            guard let until = answer.until, let host = try? Hostname(answer.hostname), let customer = try? CustomerName(answer.customer) else {
                throw AdminError("The server's answer names neither the window set nor a change request.")
            }
            Output.note(Self.note(host, customer, until: Int64(until)))
        }

        static func note(_ host: Hostname, _ customer: CustomerName, until: Int64) -> String {
            "\(host) of '\(customer)' is report-only until \(StatusTime.iso8601(until)): Pinset clients report a pin mismatch and connect after normal TLS validation, then enforce again by themselves. Legacy GCX clients keep enforcing. End it early with 'pinset host enforce \(customer) \(host)'."
        }
    }

    /// `pinset host enforce`: ends a report-only window before its time.
    struct Enforce: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End a host's report-only window now: Pinset clients enforce its pins again from the next bundle."
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The customer's name, as 'pinset customer list' shows it.") var customer: String
        @Argument(help: "The host's DNS name (or IPv4 address), as 'pinset host list' shows it.") var hostname: String
        @Option(help: ArgumentHelp("Why the window ends early, for the audit log.", valueName: "text"))
        var reason: String?
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions

        func run() async throws {
            let customer = try CustomerName(customer)
            let host = try Hostname(hostname)
            let changed: Bool
            if let client = try remote.client(credentials, for: "host enforce") {
                let answer = try await client.call(
                    .endReportOnly, ["customer": customer.rawValue, "hostname": host.rawValue], query: [("reason", reason)],
                    answer: AdminResponse.ReportOnly.self
                )
                if options.json { return try Output.json(answer) }
                changed = answer.changed
            } else {
                let admin = try options.openAdmin()
                let version = try admin.endReportOnly(host, of: customer, reason: reason, by: admin.localOperator)
                if options.json {
                    return try Output.json(AdminResponse.ReportOnly(
                        customer: customer.rawValue, hostname: host.rawValue, reportOnly: false, changed: version != nil, version: version))
                }
                changed = version != nil
            }
            Output.note(changed
                ? "\(host) of '\(customer)' enforces its pins again from the next bundle."
                : "\(host) of '\(customer)' is not report-only; nothing changed.")
        }
    }
}

/// Times as the report-only commands and `pinset status` print them.
enum StatusTime {
    static func iso8601(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
