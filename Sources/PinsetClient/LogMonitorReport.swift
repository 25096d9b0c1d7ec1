import PinsetCore
import PinsetTransparency

/// One entry a monitor run found in the log.
public struct LogMonitorEntry: Hashable, Sendable {
    public enum Content: Hashable, Sendable {
        case pinSet(PinSetLogEntry)
        /// Leaf data the log commits to that is not a pin-set entry: no Pinset server writes one, so it is
        /// reported, never skipped.
        case unparsable(reason: String)
    }

    /// The entry's position in the log.
    public let index: UInt64
    public let content: Content

    /// The customer the entry is about; `nil` for an unparsable entry.
    public var customer: String? {
        if case .pinSet(let entry) = content { return entry.customer.rawValue }
        return nil
    }
}

/// What one run of `LogMonitor` verified and found.
public struct LogMonitorReport: Hashable, Sendable {
    /// The checkpoint verified in this run, now the one kept.
    public let checkpoint: VerifiedCheckpoint
    /// The size of the checkpoint kept before this run; `nil` on a first run, which trusts the log on first use.
    public let previousTreeSize: UInt64?
    /// Every entry in `[previousTreeSize ?? 0, checkpoint.treeSize)`, in log order.
    public let entries: [LogMonitorEntry]
    /// The served bundles compared with the log, one per customer asked for, in the order asked.
    public let comparisons: [LogMonitorPinSetComparison]
    /// The state saved after this run.
    public let state: LogMonitorState

    /// Comparisons that found a served bundle the log does not hold for its version.
    public var contentNotLogged: [LogMonitorPinSetComparison] {
        comparisons.filter { if case .servedContentNotLogged = $0.outcome { true } else { false } }
    }

    /// The entries about one of `customers`, or all of them when `customers` is empty; unparsable entries always.
    public func entries(watching customers: Set<String>) -> [LogMonitorEntry] {
        guard !customers.isEmpty else { return entries }
        return entries.filter { $0.customer.map(customers.contains) ?? true }
    }

    public var unparsableEntries: [LogMonitorEntry] {
        entries.filter { $0.customer == nil }
    }
}
