import Foundation
import PinsetClient

/// What `transparency monitor` prints of a verified run: the checkpoint, the new entries of the watched customers
/// and those customers' latest logged versions.
struct MonitorDocument: Encodable {
    struct Entry: Encodable {
        let index: UInt64
        let customer: String?
        let version: Int64?
        let contentSHA256: String?
        /// Why the leaf data is not a pin-set entry; set only then.
        let error: String?

        init(_ entry: LogMonitorEntry) {
            index = entry.index
            switch entry.content {
            case .pinSet(let logged):
                customer = logged.customer.rawValue
                version = logged.version
                contentSHA256 = logged.contentSHA256.base64
                error = nil
            case .unparsable(let reason):
                customer = nil
                version = nil
                contentSHA256 = nil
                error = reason
            }
        }
    }

    /// One served bundle compared with the log (`--bundle-url`).
    struct PinSet: Encodable {
        struct Change: Encodable {
            let host: String
            let change: String
            let addedPins: [String]
            let removedPins: [String]
        }

        let customer: String
        /// `compared`, `served-content-not-logged`, `served-other-version` or `unavailable`.
        let outcome: String
        let servedVersion: Int64?
        let loggedVersion: Int64?
        /// Set for `compared`: true when no earlier content was compared, so every host is listed as added.
        let firstComparison: Bool?
        let changes: [Change]?
        let servedContentSHA256: String?
        let loggedContentSHA256: String?
        let reason: String?

        init(_ comparison: LogMonitorPinSetComparison) {
            customer = comparison.customer
            var servedVersion: Int64?, loggedVersion: Int64?, firstComparison: Bool?, changes: [Change]?
            var servedHash: String?, loggedHash: String?, reason: String?
            switch comparison.outcome {
            case .compared(let version, let found, let first):
                outcome = "compared"
                servedVersion = version
                loggedVersion = version
                firstComparison = first
                changes = found.map { Change(host: $0.host, change: $0.kind.rawValue, addedPins: $0.addedPins, removedPins: $0.removedPins) }
            case .servedContentNotLogged(let version, let served, let logged):
                outcome = "served-content-not-logged"
                servedVersion = version
                loggedVersion = version
                servedHash = served
                loggedHash = logged
            case .servedOtherVersion(let served, let logged):
                outcome = "served-other-version"
                servedVersion = served
                loggedVersion = logged
            case .unavailable(let why):
                outcome = "unavailable"
                reason = why
            }
            self.servedVersion = servedVersion
            self.loggedVersion = loggedVersion
            self.firstComparison = firstComparison
            self.changes = changes
            servedContentSHA256 = servedHash
            loggedContentSHA256 = loggedHash
            self.reason = reason
        }

        /// One line per finding, for people.
        var lines: [String] {
            switch outcome {
            case "compared":
                let changes = changes ?? []
                let head = "\(customer): served version \(servedVersion ?? 0) is the logged content"
                if changes.isEmpty { return [head + "; no pin changed since the last comparison"] }
                return [head + (firstComparison == true ? "; first comparison, every host:" : "; changed since the last comparison:")]
                    + changes.flatMap { change in
                        ["  \(change.change) \(change.host)"] + change.addedPins.map { "    + \($0)" } + change.removedPins.map { "    - \($0)" }
                    }
            case "served-content-not-logged":
                return ["\(customer): ALERT: the server serves version \(servedVersion ?? 0) with content \(servedContentSHA256 ?? "") but the log holds \(loggedContentSHA256 ?? "") for it: a bundle the log does not vouch for"]
            case "served-other-version":
                let logged = loggedVersion.map { "the newest logged version is \($0)" } ?? "no version of it is logged"
                return ["\(customer): the server serves version \(servedVersion ?? 0), \(logged); not compared (expected for a moment after an edit; a logged version that is never served was published for someone else's eyes)"]
            default:
                return ["\(customer): not compared: \(reason ?? "")"]
            }
        }
    }

    let origin: String
    let treeSize: UInt64
    let rootHash: String
    /// The kept checkpoint's size before this run; null on a first run (trust on first use).
    let previousTreeSize: UInt64?
    let witnesses: [String]
    /// The --customer names; empty when every customer is watched.
    let watchedCustomers: [String]
    let entries: [Entry]
    /// Each watched customer's highest logged version over every run so far; null for one never logged.
    let latestVersions: [String: Int64?]
    /// With --bundle-url: each --customer's served bundle compared with the log.
    let pinSets: [PinSet]

    init(report: LogMonitorReport, watched: Set<String>) {
        origin = report.checkpoint.checkpoint.origin
        treeSize = report.checkpoint.checkpoint.treeSize
        rootHash = report.checkpoint.checkpoint.rootHash.base64
        previousTreeSize = report.previousTreeSize
        witnesses = report.checkpoint.witnessCosignatures.map(\.keyName)
        watchedCustomers = watched.sorted()
        entries = report.entries(watching: watched).map(Entry.init)
        let known = report.state.latestVersions
        latestVersions = watched.isEmpty
            ? known.mapValues { Optional($0) }
            : Dictionary(uniqueKeysWithValues: watched.map { ($0, known[$0]) })
        pinSets = report.comparisons.map(PinSet.init)
    }

    private enum CodingKeys: String, CodingKey {
        case origin, treeSize, rootHash, previousTreeSize, witnesses, watchedCustomers, entries, latestVersions, pinSets
    }

    /// Written out so that `previousTreeSize` is null on a first run rather than missing.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(origin, forKey: .origin)
        try container.encode(treeSize, forKey: .treeSize)
        try container.encode(rootHash, forKey: .rootHash)
        try container.encode(previousTreeSize, forKey: .previousTreeSize)
        try container.encode(witnesses, forKey: .witnesses)
        try container.encode(watchedCustomers, forKey: .watchedCustomers)
        try container.encode(entries, forKey: .entries)
        try container.encode(latestVersions, forKey: .latestVersions)
        try container.encode(pinSets, forKey: .pinSets)
    }

    static func print(_ report: LogMonitorReport, watched: Set<String>) {
        let document = MonitorDocument(report: report, watched: watched)
        let since = document.previousTreeSize.map { "\(document.treeSize - $0) new since \($0)" }
            ?? "first run: trusted on first use, every entry read"
        let cosigners = document.witnesses.isEmpty ? "" : ", cosigned by \(document.witnesses.joined(separator: ", "))"
        Output.line("log \(document.origin): \(document.treeSize) entries, root \(document.rootHash)\(cosigners) (\(since))")
        let pinSets = document.entries.filter { $0.error == nil }
        if pinSets.isEmpty {
            Output.line(watched.isEmpty ? "no new entries" : "no new entries for \(document.watchedCustomers.joined(separator: ", "))")
        }
        Output.table(
            ["INDEX", "CUSTOMER", "VERSION", "CONTENT-SHA256"],
            pinSets.map { [String($0.index), $0.customer ?? "-", $0.version.map(String.init) ?? "-", $0.contentSHA256 ?? "-"] })
        for entry in document.entries where entry.error != nil {
            Output.warn("entry \(entry.index) is not a pin-set entry: \(entry.error ?? "")")
        }
        for pinSet in document.pinSets {
            for line in pinSet.lines {
                if pinSet.outcome == "served-content-not-logged" { Output.warn(line) } else { Output.line(line) }
            }
        }
    }
}
