import PinsetCore
import PinsetStore

/// Counts each installation's report of one kind once per hour, in bounded memory.
///
/// An app that fails the same check on every request would otherwise send hundreds of identical reports. The
/// key is a SHA-256 over the customer, the aggregation key and the installation identifier (`app-vendor-id`),
/// cut to 16 bytes: the identifier itself is never kept, and the set holds the current hour only. When it holds
/// ``maximumEntries`` keys, later reports of that hour are counted without being remembered, so a flood of
/// invented installations cannot grow memory (they could only inflate a count, which they could anyway).
///
/// Thread-safe: one short critical section per call.
public final class ReportDeduplicator: Sendable {
    public let maximumEntries: Int

    private struct HourSet: Sendable {
        var hour: Int64 = .min
        var seen: Set<[UInt8]> = []
    }

    private let state = LockedValue(HourSet())

    public init(maximumEntries: Int) {
        precondition(maximumEntries > 0, "maximumEntries must be positive")
        self.maximumEntries = maximumEntries
    }

    /// Whether this is the first report of `key` from `installation` in the key's hour.
    public func isFirst(_ key: PinFailureCount.Key, installation: String) -> Bool {
        let digest = Self.digest(key, installation: installation)
        return state.withLock { state in
            if key.hour > state.hour {
                state.hour = key.hour
                state.seen.removeAll(keepingCapacity: true)
            } else if key.hour < state.hour {
                // A report stamped in an hour already left behind: its set is gone, so count it.
                return true
            }
            if state.seen.contains(digest) { return false }
            if state.seen.count < maximumEntries { state.seen.insert(digest) }
            return true
        }
    }

    /// Forgets a report that ``isFirst(_:installation:)`` remembered but that could not be counted, so that the
    /// app's retry is counted.
    public func forget(_ key: PinFailureCount.Key, installation: String) {
        let digest = Self.digest(key, installation: installation)
        state.withLock { state in
            if state.hour == key.hour { state.seen.remove(digest) }
        }
    }

    var entryCount: Int { state.withLock { $0.seen.count } }

    private static func digest(_ key: PinFailureCount.Key, installation: String) -> [UInt8] {
        var input: [UInt8] = []
        for field in [key.customer.rawValue, key.hostname, String(key.validationResult), key.leafSPKISHA256 ?? "-",
                      key.pinsetVersion.map(String.init) ?? "-", key.appVersion, installation] {
            input += Array(field.utf8) + [0]
        }
        return Array(SHA256Fingerprint(of: input).bytes.prefix(16))
    }
}
