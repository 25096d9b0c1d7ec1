import Foundation
import PinsetCore
import PinsetStore

/// What apps reported over a window: the hourly counts of one customer, host, result and served key, added up.
public struct PinFailureSummary: Sendable {
    /// Whether the key a failing host served is pinned now.
    public enum KeyPinned: String, Sendable {
        case yes, no, hostNotPinned, noCertificate
    }

    public var customer: CustomerName
    public var hostname: String
    /// TrustKit's `TSKTrustEvaluationResult`.
    public var validationResult: Int
    public var leafSPKISHA256: String?
    public var reports: Int64 = 0
    public var firstHour = Date.distantFuture
    public var lastHour = Date.distantPast
    public var appVersions: [String] = []
    public var pinsetVersions: [Int64] = []
    public var keyPinned = KeyPinned.noCertificate

    /// Rows for `counts`, most reported first within each customer; `publicSuffixes` decides, as in the client,
    /// which entries cannot govern a host.
    public static func rows(_ counts: [PinFailureCount], pinSets: [PinSet], publicSuffixes: PublicSuffixList = .bundled) -> [PinFailureSummary] {
        struct Group: Hashable {
            var customer: CustomerName, hostname: String, result: Int, leaf: String?
        }
        // Sets, not list searches: an hour can hold a flood's worth of rows, and the view must stay quick.
        var groups: [Group: (row: PinFailureSummary, appVersions: Set<String>, pinsetVersions: Set<Int64>)] = [:]
        for count in counts {
            let key = count.key
            let group = Group(customer: key.customer, hostname: key.hostname, result: key.validationResult, leaf: key.leafSPKISHA256)
            // Taken out, not copied, so the sets stay uniquely referenced and grow in place.
            var entry = groups.removeValue(forKey: group) ?? (PinFailureSummary(customer: key.customer, hostname: key.hostname, validationResult: key.validationResult, leafSPKISHA256: key.leafSPKISHA256), [], [])
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
            row.keyPinned = keyPinned(row, in: pinSetsByCustomer[row.customer], publicSuffixes: publicSuffixes)
            return row
        }.sorted { ($0.customer, $1.reports, $0.hostname) < ($1.customer, $0.reports, $1.hostname) }
    }

    /// Whether the served key is one of the current pins of the entry that applies to the host, chosen exactly
    /// as the Pinset client chooses it (`PinEntryResolution`, with a Public Suffix List).
    static func keyPinned(_ row: PinFailureSummary, in pinSet: PinSet?, publicSuffixes: PublicSuffixList) -> KeyPinned {
        guard let leaf = row.leafSPKISHA256 else { return .noCertificate }
        guard let pinSet, let hostname = try? Hostname(row.hostname),
              let entry = PinEntryResolution(covering: hostname, in: pinSet.hosts.map(PinnedHost.init), publicSuffixes: publicSuffixes).pinned
        else { return .hostNotPinned }
        return entry.spkiSHA256.contains { $0.base64 == leaf } ? .yes : .no
    }
}

/// The reports of one customer that got no row of their own, added up over the window: `unpublished-host`
/// (hosts the customer does not pin) or `other` (kinds beyond the hour's row cap).
public struct PinFailureBucketSummary: Sendable {
    public var customer: CustomerName
    public var bucket: String
    public var reports: Int64 = 0
    public var firstHour = Date.distantFuture
    public var lastHour = Date.distantPast

    public static let unpublishedHost = "unpublished-host"
    public static let other = "other"

    public static func rows(_ buckets: [PinFailureBucket]) -> [PinFailureBucketSummary] {
        var rows: [String: PinFailureBucketSummary] = [:]
        for bucket in buckets {
            let hour = Date(timeIntervalSince1970: TimeInterval(bucket.hour))
            for (name, reports) in [(unpublishedHost, bucket.unpublishedHostReports), (other, bucket.otherReports)] where reports > 0 {
                let id = bucket.customer.rawValue + " " + name
                var row = rows[id] ?? PinFailureBucketSummary(customer: bucket.customer, bucket: name)
                row.reports += reports
                row.firstHour = min(row.firstHour, hour)
                row.lastHour = max(row.lastHour, hour)
                rows[id] = row
            }
        }
        return rows.values.sorted { ($0.customer, $0.bucket) < ($1.customer, $1.bucket) }
    }
}

/// The pin failures apps reported since a time.
public struct PinFailureOverview: Sendable {
    /// The start of the hour the window begins in.
    public var from: Date
    public var rows: [PinFailureSummary]
    public var buckets: [PinFailureBucketSummary]
}

extension Admin {
    /// What apps of `customer` (of every customer when `nil`) reported in the last `window` seconds.
    public func pinFailureReport(of customer: CustomerName?, window: Int64, now: Date = Date()) throws -> PinFailureOverview {
        let pinSets: [PinSet]
        if let customer {
            guard let pinSet = try store.pinSet(for: customer) else {
                throw AdminError("There is no customer '\(customer)'. 'pinset customer list' shows the customers.")
            }
            pinSets = [pinSet]
        } else {
            pinSets = try store.allPinSets()
        }
        let from = Int64(now.timeIntervalSince1970) - window
        return PinFailureOverview(
            from: Date(timeIntervalSince1970: TimeInterval(PinFailureCount.hour(containing: from))),
            rows: PinFailureSummary.rows(try store.pinFailureCounts(of: customer, since: from), pinSets: pinSets, publicSuffixes: publicSuffixes.list),
            buckets: PinFailureBucketSummary.rows(try store.pinFailureBuckets(of: customer, since: from))
        )
    }

    /// Seconds in `text`: digits followed by `m`, `h` or `d`, up to ten years.
    public static func parseReportWindow(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let amount = Int64(text.dropLast()), amount > 0,
              text.dropLast().allSatisfy(\.isASCII), amount <= 3650 * 86_400 / unit
        else {
            throw AdminError("--since '\(text)' is not a duration. Give a positive number followed by m, h or d, such as 90m, 24h or 7d (at most 3650d).")
        }
        return amount * unit
    }
}
