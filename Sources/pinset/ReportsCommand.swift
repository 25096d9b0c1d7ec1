import ArgumentParser
import PinsetAdmin
import Foundation
import PinsetClient
import PinsetCore
import PinsetStore

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
    @Argument(help: "Only this customer's reports.") var customer: String?
    @Option(help: ArgumentHelp("How far back: a number followed by m, h or d (minutes, hours, days).", valueName: "duration"))
    var since: String = "24h"

    func run() async throws {
        let window = try Admin.parseReportWindow(since)
        let name = try customer.map { try CustomerName($0) }
        let overview = try options.openAdmin().pinFailureReport(of: name, window: window)
        let (rows, buckets) = (overview.rows, overview.buckets)
        if options.json {
            try Output.json(AdminDocuments.pinFailures(overview))
            return
        }
        guard !rows.isEmpty || !buckets.isEmpty else {
            Output.line("No pin-failure reports since \(Output.date(overview.from)).")
            return
        }
        Output.table(["CUSTOMER", "HOST", "RESULT", "REPORTS", "FIRST HOUR", "LAST HOUR", "APP VERSIONS", "PIN-SET VERSIONS", "SERVED KEY", "KEY PINNED"], rows.map {
            [$0.customer.rawValue, $0.hostname, AdminDocuments.resultName($0.validationResult), String($0.reports),
             Output.date($0.firstHour), Output.date($0.lastHour), Self.shortList($0.appVersions),
             $0.pinsetVersions.isEmpty ? "- (TrustKit)" : Self.shortList($0.pinsetVersions.map { "v\($0)" }),
             $0.leafSPKISHA256 ?? "-", $0.keyPinned.text]
        })
        guard !buckets.isEmpty else { return }
        Output.line("")
        Output.line("Reports without a row of their own: for hosts the customer does not pin, and of new kinds after an hour reached 'reports.maxRowsPerCustomerHour' rows.")
        Output.table(["CUSTOMER", "BUCKET", "REPORTS", "FIRST HOUR", "LAST HOUR"], buckets.map {
            [$0.customer.rawValue, $0.bucket, String($0.reports), Output.date($0.firstHour), Output.date($0.lastHour)]
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
