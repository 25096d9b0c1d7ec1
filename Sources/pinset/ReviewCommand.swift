import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// Two-person review of pin edits, as a named admin (its token from --token-file or $PINSET_ADMIN_TOKEN).
struct ReviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "List, inspect, approve and reject change requests; break glass in an emergency, and acknowledge it.",
        subcommands: [List.self, Show.self, Approve.self, Reject.self, BreakGlass.self, Acknowledge.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List open change requests (with --all, decided ones too).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument var customer: String?
        @Flag(help: "Include applied and rejected requests (with --break-glass: acknowledged applications).") var all = false
        @Flag(help: "List break-glass applications (edits applied without review) instead of requests.") var breakGlass = false

        func run() async throws {
            let admin = try options.openAdmin()
            let viewer = try credentials.required(by: admin, for: "review list")
            let customer = try customer.map { try CustomerName($0) }
            let requests = try admin.changeRequests(visibleTo: viewer, customer: customer, includeDecided: all)
            let applications = try admin.breakGlassEvents(visibleTo: viewer, customer: customer, includeAcknowledged: all)
            if options.json {
                return try breakGlass ? Output.json(applications.map(AdminDocuments.breakGlass)) : Output.json(requests.map(AdminDocuments.changeRequest))
            }
            if breakGlass { return Self.printBreakGlass(applications, all: all) }
            if requests.isEmpty { Output.note("No change requests\(all ? "" : " open") that \(viewer.name) may see.") }
            Output.table(["ID", "CUSTOMER", "STATE", "AUTHOR", "EXPIRES", "EDIT", "REASON"], requests.map {
                [String($0.id), $0.customer.rawValue, $0.state.rawValue, $0.author, Output.date($0.expiresAt),
                 $0.edits.map(\.summary).joined(separator: "; "), $0.reason]
            })
            if !applications.isEmpty {
                Output.line("")
                Self.printBreakGlass(applications, all: all)
            }
        }

        static func printBreakGlass(_ applications: [BreakGlassEvent], all: Bool) {
            guard !applications.isEmpty else { return Output.note("No break-glass applications\(all ? "" : " waiting for acknowledgement").") }
            Output.line(all ? "Applied without review (break-glass):" : "Applied without review (break-glass), not yet acknowledged ('pinset review acknowledge ID'):")
            Output.table(["ID", "CUSTOMER", "REQUEST", "BY", "AT", "VERSION", "REASON", "ACKNOWLEDGED"], applications.map {
                [String($0.id), $0.customer, String($0.changeRequestID), $0.appliedBy, Output.date($0.appliedAt), String($0.appliedVersion), $0.reason,
                 $0.acknowledgedBy.map { "by \($0)" } ?? "no"]
            })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a request: its edits and how the resulting pins match each host's live chain now.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument var id: Int64
        @OptionGroup var reach: ReviewReachOptions

        func run() async throws {
            let admin = try options.openAdmin()
            let viewer = try credentials.required(by: admin, for: "review show")
            let request = try admin.changeRequest(id, visibleTo: viewer)
            let previews = request.state == .open ? try await admin.preview(request) { _ in reach.settings() } : []
            if options.json {
                var document = AdminDocuments.changeRequest(request)
                document["liveCheck"] = previews.map { AdminDocuments.liveCheck($0.hostname, $0.preview.outcome) }
                try Output.json(document)
                return
            }
            Output.line("change request \(request.id) for '\(request.customer)': \(request.state.rawValue)")
            Output.line("author: \(request.author); made \(Output.date(request.createdAt)) at version \(request.baseVersion); expires \(Output.date(request.expiresAt))")
            Output.line("reason: \(request.reason)")
            for edit in request.edits { Output.line(edit.summary) }
            for (hostname, preview) in previews { Output.line("live check of \(hostname) after the edit: \(AdminDocuments.describe(preview.outcome))") }
            if let decidedBy = request.decidedBy {
                Output.line("\(request.state.rawValue) by \(decidedBy) at \(Output.date(request.decidedAt))" + (request.decisionNote.map { ": \($0)" } ?? ""))
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve another admin's request: its hosts are checked against their live chains again, then it is applied in one transaction.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument var id: Int64
        @OptionGroup var reach: ReviewReachOptions
        @OptionGroup var skip: LiveCheckSkipOptions

        func run() async throws {
            let admin = try options.openAdmin()
            let reviewer = try credentials.required(by: admin, for: "review approve")
            let settings = reach.settings(overrideReason: skip.skipsCheck ? skip.reason : nil)
            let applied = try await admin.approve(id, by: reviewer) { _ in settings }
            if options.json { return try Output.json(AdminDocuments.changeRequest(applied)) }
            Output.note("Approved and applied change request \(id) of \(applied.author): '\(applied.customer)' is at version \(applied.appliedVersion ?? 0).")
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Reject a request (or withdraw your own).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument var id: Int64
        @Option(help: "Why, for the author and the audit log.") var note: String = ""

        func run() async throws {
            let admin = try options.openAdmin()
            let reviewer = try credentials.required(by: admin, for: "review reject")
            let rejected = try admin.reject(id, by: reviewer, note: note)
            if options.json { return try Output.json(AdminDocuments.changeRequest(rejected)) }
            Output.note("Rejected change request \(id) of \(rejected.author).")
        }
    }


    struct BreakGlass: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "break-glass",
            abstract: "As an operator, apply a request without a second admin's review (an emergency only).",
            discussion: "The live-chain check still runs. The application is audited, and shows in /status, the metrics and 'review list' until another admin acknowledges it."
        )
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument var id: Int64
        @Option(help: "Why review could not wait: kept in the audit log and shown until acknowledged.") var reason: String
        @OptionGroup var reach: ReviewReachOptions

        func run() async throws {
            let admin = try options.openAdmin()
            let operatorAccount = try credentials.required(by: admin, for: "review break-glass")
            // Breaking glass skips the second admin, never the lock-out guard: the live-chain check always runs.
            let settings = reach.settings()
            let applied = try await admin.breakGlass(id, by: operatorAccount, reason: reason) { _ in settings }
            if options.json { return try Output.json(AdminDocuments.changeRequest(applied)) }
            Output.note("Applied change request \(id) of \(applied.author) WITHOUT REVIEW: '\(applied.customer)' is at version \(applied.appliedVersion ?? 0). It shows in /status until another admin acknowledges it ('pinset review acknowledge').")
        }
    }

    struct Acknowledge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Acknowledge a break-glass application (an operator, or a reviewer of its customer, other than who applied it).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument(help: "The break-glass application's id, as 'review list' shows it.") var id: Int64
        @Option(help: "What was checked, for the audit log.") var note: String = ""

        func run() async throws {
            let admin = try options.openAdmin()
            let acknowledger = try credentials.required(by: admin, for: "review acknowledge")
            let event = try admin.acknowledgeBreakGlass(id, by: acknowledger, note: note)
            if options.json { return try Output.json(AdminDocuments.breakGlass(event)) }
            Output.note("Acknowledged break-glass application \(id) (change request \(event.changeRequestID) of '\(event.customer)', applied by \(event.appliedBy)).")
        }
    }
}

/// Where `review show` and `review approve` reach the hosts they check.
struct ReviewReachOptions: ParsableArguments {
    @Option(help: ArgumentHelp("PEM file of CA certificates to validate live chains against instead of the system store.", valueName: "file")) var caFile: String?
    @Option(help: ArgumentHelp("Connect the live-chain checks to this address (and port, default each host's port) while sending and validating the host name.", valueName: "address[:port]")) var connectTo: String?

    func settings(overrideReason: String? = nil) -> LiveCheckSettings {
        LiveCheckSettings(overrideReason: overrideReason, caFile: caFile, connectTo: connectTo)
    }
}
