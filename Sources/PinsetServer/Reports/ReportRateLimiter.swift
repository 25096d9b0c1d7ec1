import PinsetConnectionSlots
import PinsetCore

/// Limits how many reports one client address may send per minute, in bounded memory. An IPv6 client counts by its
/// /64 (``ClientAddress``), so one subscriber's block is one client, not 2^64 of them.
///
/// Counting is per fixed minute: the table starts empty each minute, so it never holds more than one minute's
/// addresses, and at most ``maximumAddresses`` of them. An address first seen once the table is full is refused
/// for the rest of the minute: a flood from many addresses is then limited as a whole instead of growing the
/// table (fail closed; apps retry later). Addresses are kept only in memory, never stored.
///
/// Thread-safe: one short critical section per call. Time is injected, so tests need no sleeping.
public final class ReportRateLimiter: Sendable {
    public let reportsPerMinute: Int
    public let maximumAddresses: Int

    private struct Window: Sendable {
        var minute: Int64 = .min
        var counts: [String: Int] = [:]
    }

    private let window = LockedValue(Window())

    public init(reportsPerMinute: Int, maximumAddresses: Int) {
        precondition(reportsPerMinute > 0 && maximumAddresses > 0, "rate limits must be positive")
        self.reportsPerMinute = reportsPerMinute
        self.maximumAddresses = maximumAddresses
    }

    /// Counts one report from `address` at `unixSeconds`; false when it is over the limit.
    public func admit(_ address: String, at unixSeconds: Int64) -> Bool {
        let address = ClientAddress.key(for: address)
        let minute = unixSeconds >= 0 ? unixSeconds / 60 : (unixSeconds - 59) / 60
        return window.withLock { window in
            if window.minute != minute {
                window.minute = minute
                window.counts.removeAll(keepingCapacity: true)
            }
            let count = window.counts[address] ?? 0
            if count == 0 && window.counts.count >= maximumAddresses { return false }
            guard count < reportsPerMinute else { return false }
            window.counts[address] = count + 1
            return true
        }
    }

    /// Addresses counted in the current minute (for tests of the bound).
    var trackedAddresses: Int { window.withLock { $0.counts.count } }
}
