import ArgumentParser
import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck

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
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument var customer: String?
        @Flag(help: "Include applied and rejected requests (with --break-glass: acknowledged applications).") var all = false
        @Flag(help: "List break-glass applications (edits applied without review) instead of requests.") var breakGlass = false

        func run() async throws {
            let customer = try customer.map { try CustomerName($0) }
            let requests: [AdminResponse.ChangeRequest]
            let applications: [AdminResponse.BreakGlassEvent]
            let viewerName: String
            if let client = try remote.client(credentials, for: "review list", tokenActsLocally: true) {
                let filter: [(String, String?)] = [("customer", customer?.rawValue), ("all", String(all))]
                requests = try await client.call(.listChangeRequests, query: filter)
                applications = try await client.call(.listBreakGlass, query: filter)
                viewerName = try await client.call(.me, answer: AdminResponse.Me.self).name
            } else {
                let admin = try options.openAdmin()
                let viewer = try credentials.required(by: admin, for: "review list")
                requests = try admin.changeRequests(visibleTo: viewer, customer: customer, includeDecided: all).map(AdminDocuments.changeRequest)
                applications = try admin.breakGlassEvents(visibleTo: viewer, customer: customer, includeAcknowledged: all).map(AdminDocuments.breakGlass)
                viewerName = viewer.name
            }
            if options.json { return breakGlass ? try Output.json(applications) : try Output.json(requests) }
            if breakGlass { return ReviewPrinter.breakGlass(applications, all: all) }
            if requests.isEmpty { Output.note("No change requests\(all ? "" : " open") that \(viewerName) may see.") }
            ReviewPrinter.requests(requests)
            if !applications.isEmpty {
                Output.line("")
                ReviewPrinter.breakGlass(applications, all: all)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a request: its edits and how the resulting pins match each host's live chain now.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The number 'pinset review list' shows.") var id: Int64
        @OptionGroup var reach: ReviewReachOptions

        func run() async throws {
            let document: AdminResponse.ChangeRequest
            if let client = try remote.client(credentials, for: "review show", localOnly: reach.given, tokenActsLocally: true) {
                document = try await client.call(.getChangeRequest, ["id": String(id)])
            } else {
                let admin = try options.openAdmin()
                let viewer = try credentials.required(by: admin, for: "review show")
                let request = try admin.changeRequest(id, visibleTo: viewer)
                var local = AdminDocuments.changeRequest(request)
                if request.state == .open {
                    local.liveCheck = try await admin.preview(request) { _ in reach.settings() }.map { AdminDocuments.liveCheck($0.hostname, $0.preview.outcome, toOperator: true) }
                }
                document = local
            }
            if options.json { return try Output.json(document) }
            ReviewPrinter.request(document)
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve another admin's request: its hosts are checked against their live chains again, then it is applied in one transaction.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The number 'pinset review list' shows.") var id: Int64
        @OptionGroup var reach: ReviewReachOptions
        @OptionGroup var skip: LiveCheckSkipOptions
        @OptionGroup var bound: ReportOnlyBoundOptions

        func run() async throws {
            let applied: AdminResponse.ChangeRequest
            if let client = try remote.client(credentials, for: "review approve", localOnly: reach.given + [bound.given], tokenActsLocally: true) {
                let body = skip.skipsCheck ? AdminRequest.Approve(skipLiveCheck: true, reason: skip.reason ?? "") : AdminRequest.Approve()
                applied = try await client.call(.approveChangeRequest, ["id": String(id)], body: body)
            } else {
                let admin = try options.openAdmin()
                let reviewer = try credentials.required(by: admin, for: "review approve")
                let settings = reach.settings(overrideReason: skip.skipsCheck ? skip.reason : nil)
                applied = AdminDocuments.changeRequest(try await admin.approve(
                    id, by: reviewer, liveCheck: { _ in settings }, reportOnlyMaximumSeconds: try bound.maximumSeconds()))
            }
            if options.json { return try Output.json(applied) }
            Output.note("Approved and applied change request \(id) of \(applied.author): '\(applied.customer)' is at version \(applied.appliedVersion ?? 0).")
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Reject a request (or withdraw your own).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The number 'pinset review list' shows.") var id: Int64
        @Option(help: "Why, for the author and the audit log.") var note: String = ""

        func run() async throws {
            let rejected: AdminResponse.ChangeRequest
            if let client = try remote.client(credentials, for: "review reject", tokenActsLocally: true) {
                rejected = try await client.call(.rejectChangeRequest, ["id": String(id)], body: AdminRequest.Reject(note: note))
            } else {
                let admin = try options.openAdmin()
                let reviewer = try credentials.required(by: admin, for: "review reject")
                rejected = AdminDocuments.changeRequest(try admin.reject(id, by: reviewer, note: note))
            }
            if options.json { return try Output.json(rejected) }
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
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The number 'pinset review list' shows.") var id: Int64
        @Option(help: "Why review could not wait: kept in the audit log and shown until acknowledged.") var reason: String
        @OptionGroup var reach: ReviewReachOptions
        @OptionGroup var bound: ReportOnlyBoundOptions

        func run() async throws {
            let applied: AdminResponse.ChangeRequest
            if let client = try remote.client(credentials, for: "review break-glass", localOnly: reach.given + [bound.given], tokenActsLocally: true) {
                applied = try await client.call(.breakGlass, ["id": String(id)], body: AdminRequest.BreakGlass(reason: reason))
            } else {
                let admin = try options.openAdmin()
                let operatorAccount = try credentials.required(by: admin, for: "review break-glass")
                // Breaking glass skips the second admin, never the lock-out guard: the live-chain check always runs.
                let settings = reach.settings()
                applied = AdminDocuments.changeRequest(try await admin.breakGlass(
                    id, by: operatorAccount, reason: reason, liveCheck: { _ in settings }, reportOnlyMaximumSeconds: try bound.maximumSeconds()))
            }
            if options.json { return try Output.json(applied) }
            Output.note("Applied change request \(id) of \(applied.author) WITHOUT REVIEW: '\(applied.customer)' is at version \(applied.appliedVersion ?? 0). It shows in /status until another admin acknowledges it ('pinset review acknowledge').")
        }
    }

    struct Acknowledge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Acknowledge a break-glass application (an operator, or a reviewer of its customer, other than who applied it).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
        @OptionGroup(title: "Through a server") var remote: ServerOptions
        @Argument(help: "The break-glass application's id, as 'review list' shows it.") var id: Int64
        @Option(help: "What was checked, for the audit log.") var note: String = ""

        func run() async throws {
            let event: AdminResponse.BreakGlassEvent
            if let client = try remote.client(credentials, for: "review acknowledge", tokenActsLocally: true) {
                event = try await client.call(.acknowledgeBreakGlass, ["id": String(id)], body: AdminRequest.Acknowledge(note: note))
            } else {
                let admin = try options.openAdmin()
                let acknowledger = try credentials.required(by: admin, for: "review acknowledge")
                event = AdminDocuments.breakGlass(try admin.acknowledgeBreakGlass(id, by: acknowledger, note: note))
            }
            if options.json { return try Output.json(event) }
            Output.note("Acknowledged break-glass application \(id) (change request \(event.changeRequest) of '\(event.customer)', applied by \(event.appliedBy)).")
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

    /// The options given, for `--server`, where the server's own settings apply instead.
    var given: [(name: String, given: Bool)] {
        [("--ca-file", caFile != nil), ("--connect-to", connectTo != nil)]
    }
}
