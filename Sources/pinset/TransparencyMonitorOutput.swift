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
    }

    private enum CodingKeys: String, CodingKey {
        case origin, treeSize, rootHash, previousTreeSize, witnesses, watchedCustomers, entries, latestVersions
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
    }
}
