import ArgumentParser
import PinsetAdmin
import PinsetAdminContract
import Foundation
import PinsetClient
import PinsetCore

/// `pinset reports`: what apps reported failing, from the hourly counts the reports listener stored.
struct ReportsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reports",
        abstract: "Show the pin failures apps reported: which host, since when, how often, for which app and pin-set versions.",
        discussion: """
            One row per customer, host, result and served key, from the counts the reports listener stores per hour \
            (see 'reports' in the server configuration). KEY PINNED says whether the key of the certificate the app \
            was served is one of the host's pins now: 'yes' means the pins were fixed since (or the app holds an old \
            pin set); 'NO' means apps still fail until a pin for that key is added or the server's certificate is \
            changed back.
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup(title: "Named admin") var credentials: AdminTokenOptions
    @OptionGroup(title: "Through a server") var remote: ServerOptions
    @Argument(help: "Only this customer's reports (required with --server).") var customer: String?
    @Option(help: ArgumentHelp("How far back: a number followed by m, h or d (minutes, hours, days).", valueName: "duration"))
    var since: String = "24h"

    func run() async throws {
        let window = try Admin.parseReportWindow(since)
        let name = try customer.map { try CustomerName($0) }
        let documents: [AdminResponse.PinFailure]
        if let client = try remote.client(credentials, for: "reports") {
            guard let name else { throw AdminError("'pinset reports --server' shows one customer's reports: give the CUSTOMER.") }
            documents = try await client.call(.pinFailures, ["customer": name.rawValue], query: [("since", since)])
        } else {
            documents = AdminDocuments.pinFailures(try options.openAdmin().pinFailureReport(of: name, window: window))
        }
        if options.json { return try Output.json(documents) }
        let rows = documents.filter { !$0.isBucket }
        let buckets = documents.filter(\.isBucket)
        guard !rows.isEmpty || !buckets.isEmpty else {
            Output.line("No pin-failure reports since \(Output.date(Date().addingTimeInterval(-TimeInterval(window)))).")
            return
        }
        Output.table(["CUSTOMER", "HOST", "RESULT", "REPORTS", "FIRST HOUR", "LAST HOUR", "APP VERSIONS", "PIN-SET VERSIONS", "SERVED KEY", "KEY PINNED"], rows.map { row in
            let pinsetVersions = (row.pinsetVersions ?? []).map { "v\($0)" }
            return [row.customer, row.hostname ?? "-", row.result ?? "-", "\(row.reports)", row.firstHour, row.lastHour,
                Self.shortList(row.appVersions ?? []),
                pinsetVersions.isEmpty ? "- (TrustKit)" : Self.shortList(pinsetVersions),
                row.servedLeafSPKISHA256 ?? "-",
                row.servedKeyState.flatMap(PinFailureSummary.KeyPinned.init(rawValue:))?.text ?? "-",
            ]
        })
        guard !buckets.isEmpty else { return }
        Output.line("")
        Output.line("Reports without a row of their own: for hosts the customer does not pin, and of new kinds after an hour reached 'reports.maxRowsPerCustomerHour' rows.")
        Output.table(["CUSTOMER", "BUCKET", "REPORTS", "FIRST HOUR", "LAST HOUR"], buckets.map { bucket in
            [bucket.customer, bucket.bucket ?? "-", "\(bucket.reports)", bucket.firstHour, bucket.lastHour]
        })
    }

    /// At most `limit` items and how many more, so that a row stays one readable line after a flood of versions;
    /// `--json` lists them all.
    static func shortList(_ items: [String], limit: Int = 5) -> String {
        guard items.count > limit else { return items.joined(separator: ",") }
        return items.prefix(limit).joined(separator: ",") + ",… (\(items.count - limit) more)"
    }
}

extension PinFailureSummary.KeyPinned {
    var text: String {
        switch self {
        case .yes: "yes"
        case .no: "NO"
        case .hostNotPinned: "host not pinned now"
        case .noCertificate: "- (no certificate)"
        }
    }
}
