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
        abstract: "List, inspect, approve and reject change requests.",
        subcommands: [List.self, Show.self, Approve.self, Reject.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List open change requests (with --all, decided ones too).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminCredentialOptions
        @Argument var customer: String?
        @Flag(help: "Include applied and rejected requests.") var all = false

        func run() async throws {
            let admin = try options.openAdmin()
            let viewer = try credentials.required(by: admin, for: "review list")
            let requests = try admin.changeRequests(visibleTo: viewer, customer: try customer.map { try CustomerName($0) }, includeDecided: all)
            if options.json {
                try Output.json(requests.map(AdminDocuments.changeRequest))
                return
            }
            if requests.isEmpty { Output.note("No change requests\(all ? "" : " open") that \(viewer.name) may see.") }
            Output.table(["ID", "CUSTOMER", "STATE", "AUTHOR", "EXPIRES", "EDIT", "REASON"], requests.map {
                [String($0.id), $0.customer.rawValue, $0.state.rawValue, $0.author, Output.date($0.expiresAt),
                 $0.edits.map(\.summary).joined(separator: "; "), $0.reason]
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



}

/// Where `review show` and `review approve` reach the hosts they check.
struct ReviewReachOptions: ParsableArguments {
    @Option(help: ArgumentHelp("PEM file of CA certificates to validate live chains against instead of the system store.", valueName: "file")) var caFile: String?
    @Option(help: ArgumentHelp("Connect the live-chain checks to this address (and port, default each host's port) while sending and validating the host name.", valueName: "address[:port]")) var connectTo: String?

    func settings(overrideReason: String? = nil) -> LiveCheckSettings {
        LiveCheckSettings(overrideReason: overrideReason, caFile: caFile, connectTo: connectTo)
    }
}
