import PinsetCore

/// Reports counted per customer over the last hour, in memory, for `/status`.
///
/// One count per minute per customer; customers are only those the server serves (the handler refuses others),
/// so memory is bounded by the operator. Per instance: it starts empty at each start.
///
/// Thread-safe: one short critical section per call.
public final class RecentReportCounter: Sendable {
    public static let windowSeconds: Int64 = 3600

    private let minutes = LockedValue<[CustomerName: [Int64: Int]]>([:])

    public init() {}

    public func record(_ customer: CustomerName, at unixSeconds: Int64) {
        let minute = unixSeconds / 60
        minutes.withLock { all in
            // In place: no copy of the customer's minutes per report.
            all[customer, default: [:]][minute, default: 0] += 1
            if let counts = all[customer], counts.count > Int(Self.windowSeconds / 60) {
                all[customer] = counts.filter { $0.key > minute - Self.windowSeconds / 60 }
            }
        }
    }

    /// Each customer's reports in the hour before `unixSeconds`; customers without any are left out.
    public func lastHour(at unixSeconds: Int64) -> [CustomerName: Int] {
        let first = unixSeconds / 60 - Self.windowSeconds / 60 + 1
        return minutes.withLock { all in
            var result: [CustomerName: Int] = [:]
            for (customer, counts) in all {
                let recent = counts.filter { $0.key >= first }
                all[customer] = recent.isEmpty ? nil : recent
                let total = recent.values.reduce(0, +)
                if total > 0 { result[customer] = total }
            }
            return result
        }
    }
}
