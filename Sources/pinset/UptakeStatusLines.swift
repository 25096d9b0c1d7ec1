import PinsetStatus

/// The uptake block of `pinset status`: per customer, how many of the last hour's fetches already hold the
/// version served now, the oldest version still seen and the fetches that reported none.
enum UptakeStatusLines {
    static func lines(from uptake: ServerStatus.Uptake?) -> [String] {
        guard let uptake else { return [] }
        let minutes = uptake.windowSeconds / 60
        var lines = ["uptake (last \(minutes) min, fetches served by this instance):"]
        if uptake.customers.isEmpty { lines.append("  no bundle fetches") }
        for (name, customer) in uptake.customers.sorted(by: { $0.key < $1.key }) {
            let latest = customer.latestVersion.map { "v\($0)" } ?? "not served"
            let share = customer.shareOnLatest.map { "\(Int(($0 * 100).rounded()))%" } ?? "-"
            let oldest = customer.oldestVersionSeen.map { "v\($0)" } ?? "-"
            lines.append("  \(name): \(customer.fetches) fetches; on latest (\(latest)): \(share) (\(customer.fetchesOnLatest) of \(customer.fetchesReportingVersion) reporting a version); oldest seen: \(oldest); unknown version: \(customer.unknownVersionFetches)")
        }
        return lines
    }
}
