import Foundation

/// The uptake block of `pinset status`: per customer, how many of the last hour's fetches already hold the
/// version served now, the oldest version still seen and the fetches that reported none.
enum UptakeStatusLines {
    static func lines(from report: [String: Any]) -> [String] {
        guard let uptake = report["uptake"] as? [String: Any], let customers = uptake["customers"] as? [String: Any] else { return [] }
        let minutes = ((uptake["windowSeconds"] as? Int) ?? 3600) / 60
        var lines = ["uptake (last \(minutes) min, fetches served by this instance):"]
        if customers.isEmpty { lines.append("  no bundle fetches") }
        for name in customers.keys.sorted() {
            guard let customer = customers[name] as? [String: Any] else { continue }
            let fetches = customer["fetches"] as? Int ?? 0
            let reported = customer["fetchesReportingVersion"] as? Int ?? 0
            let onLatest = customer["fetchesOnLatest"] as? Int ?? 0
            let unknown = customer["unknownVersionFetches"] as? Int ?? 0
            let latest = (customer["latestVersion"] as? Int).map { "v\($0)" } ?? "not served"
            let share = (customer["shareOnLatest"] as? Double).map { "\(Int(($0 * 100).rounded()))%" } ?? "-"
            let oldest = (customer["oldestVersionSeen"] as? Int).map { "v\($0)" } ?? "-"
            lines.append("  \(name): \(fetches) fetches; on latest (\(latest)): \(share) (\(onLatest) of \(reported) reporting a version); oldest seen: \(oldest); unknown version: \(unknown)")
        }
        return lines
    }
}
