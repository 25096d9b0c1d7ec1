import PinsetStatus

/// The reports block of `pinset status`: whether the reports listener is on, and the last hour's reports per
/// customer.
enum ReportStatusLines {
    static func lines(from reports: ServerStatus.Reports?) -> [String] {
        guard let reports else { return [] }
        guard reports.enabled else {
            return ["pin-failure reports: off (set 'reports' in the server configuration)"]
        }
        let counts = reports.failuresLastHour ?? [:]
        guard !counts.isEmpty else { return ["pin-failure reports: on; none in the last hour ('pinset reports' shows older ones)"] }
        let perCustomer = counts.keys.sorted().map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        return ["pin-failure reports: on; last hour: \(perCustomer) ('pinset reports' for detail)"]
    }
}
