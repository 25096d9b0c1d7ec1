import ArgumentParser
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
        let window = try Self.parseDuration(since)
        let name = try customer.map { try CustomerName($0) }
        let store = try options.openStore()
        let pinSets: [PinSet]
        if let name {
            guard let pinSet = try store.pinSet(for: name) else {
                throw CLIError("There is no customer '\(name)'. 'pinset customer list' shows the customers.")
            }
            pinSets = [pinSet]
        } else {
            pinSets = try store.allPinSets()
        }
        let from = Int64(Date().timeIntervalSince1970) - window
        let rows = ReportSummary.rows(try store.pinFailureCounts(of: name, since: from), pinSets: pinSets)
        let buckets = BucketSummary.rows(try store.pinFailureBuckets(of: name, since: from))
        if options.json {
            try Output.json(rows.map(\.jsonObject) + buckets.map(\.jsonObject))
            return
        }
        guard !rows.isEmpty || !buckets.isEmpty else {
            Output.line("No pin-failure reports since \(Output.date(Date(timeIntervalSince1970: TimeInterval(PinFailureCount.hour(containing: from))))).")
            return
        }
        Output.table(["CUSTOMER", "HOST", "RESULT", "REPORTS", "FIRST HOUR", "LAST HOUR", "APP VERSIONS", "PIN-SET VERSIONS", "SERVED KEY", "KEY PINNED"], rows.map {
            [$0.customer.rawValue, $0.hostname, ReportSummary.resultName($0.validationResult), String($0.reports),
             Output.date($0.firstHour), Output.date($0.lastHour), ReportSummary.shortList($0.appVersions),
             $0.pinsetVersions.isEmpty ? "- (TrustKit)" : ReportSummary.shortList($0.pinsetVersions.map { "v\($0)" }),
             $0.leafSPKISHA256 ?? "-", $0.keyPinned.text]
        })
        guard !buckets.isEmpty else { return }
        Output.line("")
        Output.line("Reports without a row of their own: for hosts the customer does not pin, and of new kinds after an hour reached 'reports.maxRowsPerCustomerHour' rows.")
        Output.table(["CUSTOMER", "BUCKET", "REPORTS", "FIRST HOUR", "LAST HOUR"], buckets.map {
            [$0.customer.rawValue, $0.bucket, String($0.reports), Output.date($0.firstHour), Output.date($0.lastHour)]
        })
    }

    /// Seconds in `text`: digits followed by `m`, `h` or `d`, up to ten years.
    static func parseDuration(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let amount = Int64(text.dropLast()), amount > 0,
              text.dropLast().allSatisfy(\.isASCII), amount <= 3650 * 86_400 / unit
        else {
            throw CLIError("--since '\(text)' is not a duration. Give a positive number followed by m, h or d, such as 90m, 24h or 7d (at most 3650d).")
        }
        return amount * unit
    }
}

/// One row of `pinset reports`: the hourly counts of one customer, host, result and served key, added up.
struct ReportSummary {
    enum KeyPinned {
        case yes, no, hostNotPinned, noCertificate

        var text: String {
            switch self {
            case .yes: "yes"
            case .no: "NO"
            case .hostNotPinned: "host not pinned now"
            case .noCertificate: "- (no certificate)"
            }
        }

        var jsonValue: Any {
            switch self {
            case .yes: true
            case .no: false
            case .hostNotPinned, .noCertificate: NSNull()
            }
        }
    }

    var customer: CustomerName
    var hostname: String
    var validationResult: Int
    var leafSPKISHA256: String?
    var reports: Int64 = 0
    var firstHour = Date.distantFuture
    var lastHour = Date.distantPast
    var appVersions: [String] = []
    var pinsetVersions: [Int64] = []
    var keyPinned = KeyPinned.noCertificate

    static func rows(_ counts: [PinFailureCount], pinSets: [PinSet]) -> [ReportSummary] {
        struct Group: Hashable {
            var customer: CustomerName, hostname: String, result: Int, leaf: String?
        }
        // Sets, not list searches: an hour can hold a flood's worth of rows, and the view must stay quick.
        var groups: [Group: (row: ReportSummary, appVersions: Set<String>, pinsetVersions: Set<Int64>)] = [:]
        for count in counts {
            let key = count.key
            let group = Group(customer: key.customer, hostname: key.hostname, result: key.validationResult, leaf: key.leafSPKISHA256)
            // Taken out, not copied, so the sets stay uniquely referenced and grow in place.
            var entry = groups.removeValue(forKey: group) ?? (ReportSummary(customer: key.customer, hostname: key.hostname, validationResult: key.validationResult, leafSPKISHA256: key.leafSPKISHA256), [], [])
            entry.row.reports += count.reports
            let hour = Date(timeIntervalSince1970: TimeInterval(key.hour))
            entry.row.firstHour = min(entry.row.firstHour, hour)
            entry.row.lastHour = max(entry.row.lastHour, hour)
            entry.appVersions.insert(key.appVersion)
            if let version = key.pinsetVersion { entry.pinsetVersions.insert(version) }
            groups[group] = entry
        }
        let pinSetsByCustomer = Dictionary(pinSets.map { ($0.customer, $0) }, uniquingKeysWith: { first, _ in first })
        return groups.values.map { entry in
            var row = entry.row
            row.appVersions = entry.appVersions.sorted()
            row.pinsetVersions = entry.pinsetVersions.sorted()
            row.keyPinned = keyPinned(row, in: pinSetsByCustomer[row.customer])
            return row
        }.sorted { ($0.customer, $1.reports, $0.hostname) < ($1.customer, $0.reports, $1.hostname) }
    }

    /// Whether the served key is one of the current pins of the entry that applies to the host, chosen exactly
    /// as the Pinset client chooses it (`PinEntryResolution`, with the bundled Public Suffix List).
    static func keyPinned(_ row: ReportSummary, in pinSet: PinSet?) -> KeyPinned {
        guard let leaf = row.leafSPKISHA256 else { return .noCertificate }
        guard let pinSet, let hostname = try? Hostname(row.hostname),
              let entry = PinEntryResolution(covering: hostname, in: pinSet.hosts.map(PinnedHost.init), publicSuffixes: .bundled).pinned
        else { return .hostNotPinned }
        return entry.spkiSHA256.contains { $0.base64 == leaf } ? .yes : .no
    }

    /// At most `limit` items and how many more, so that a row stays one readable line after a flood of versions;
    /// `--json` lists them all.
    static func shortList(_ items: [String], limit: Int = 5) -> String {
        guard items.count > limit else { return items.joined(separator: ",") }
        return items.prefix(limit).joined(separator: ",") + ",… (\(items.count - limit) more)"
    }

    /// TrustKit's `TSKTrustEvaluationResult` names.
    static func resultName(_ code: Int) -> String {
        switch code {
        case 0: "success"
        case 1: "no-matching-pin"
        case 2: "invalid-chain"
        case 3: "invalid-parameters"
        case 4: "user-defined-trust-anchor"
        case 5: "no-spki-hash"
        default: "result \(code)"
        }
    }

    var jsonObject: [String: Any] {
        [
            "customer": customer.rawValue, "hostname": hostname, "validationResult": validationResult,
            "result": Self.resultName(validationResult), "reports": reports,
            "firstHour": Output.date(firstHour), "lastHour": Output.date(lastHour),
            "appVersions": appVersions, "pinsetVersions": pinsetVersions,
            "servedLeafSPKISHA256": leafSPKISHA256 ?? NSNull(), "servedKeyPinned": keyPinned.jsonValue,
        ]
    }
}

/// One bucket row of `pinset reports`: the reports of one customer that got no row of their own, added up over the
/// window, `unpublished-host` (hosts the customer does not pin) or `other` (kinds beyond the hour's row cap).
struct BucketSummary {
    var customer: CustomerName
    var bucket: String
    var reports: Int64 = 0
    var firstHour = Date.distantFuture
    var lastHour = Date.distantPast

    static let unpublishedHost = "unpublished-host"
    static let other = "other"

    static func rows(_ buckets: [PinFailureBucket]) -> [BucketSummary] {
        var rows: [String: BucketSummary] = [:]
        for bucket in buckets {
            let hour = Date(timeIntervalSince1970: TimeInterval(bucket.hour))
            for (name, reports) in [(unpublishedHost, bucket.unpublishedHostReports), (other, bucket.otherReports)] where reports > 0 {
                let id = bucket.customer.rawValue + " " + name
                var row = rows[id] ?? BucketSummary(customer: bucket.customer, bucket: name)
                row.reports += reports
                row.firstHour = min(row.firstHour, hour)
                row.lastHour = max(row.lastHour, hour)
                rows[id] = row
            }
        }
        return rows.values.sorted { ($0.customer, $0.bucket) < ($1.customer, $1.bucket) }
    }

    var jsonObject: [String: Any] {
        [
            "customer": customer.rawValue, "bucket": bucket, "hostname": NSNull(), "reports": reports,
            "firstHour": Output.date(firstHour), "lastHour": Output.date(lastHour),
        ]
    }
}
