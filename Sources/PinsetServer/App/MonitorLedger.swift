import Foundation
import PinsetCore
import PinsetLiveCheck

/// The monitor's memory: each host's latest check and since when it has been in that state. Pure: the
/// monitor feeds it a pass's results and logs the changes it returns.
public struct MonitorLedger: Sendable {
    public struct Key: Hashable, Sendable {
        public var customer: CustomerName
        public var hostname: Hostname
    }

    public struct Entry: Sendable {
        public var result: HostCheckResult
        /// When the host entered its current state (the first pass that saw it there).
        public var since: Date
    }

    /// A host whose state differs from the previous pass's, or that is first seen in a state other than
    /// `matches` (a healthy host appearing is not news).
    public struct StateChange: Sendable, Equatable {
        public var customer: CustomerName
        public var hostname: Hostname
        public var port: UInt16
        public var from: HostCheckState?
        public var to: HostCheckState
        public var detail: String

        public init(customer: CustomerName, hostname: Hostname, port: UInt16, from: HostCheckState?, to: HostCheckState, detail: String) {
            self.customer = customer
            self.hostname = hostname
            self.port = port
            self.from = from
            self.to = to
            self.detail = detail
        }
    }

    public private(set) var entries: [Key: Entry] = [:]

    public init() {}

    /// Replaces the ledger with one pass's results; hosts missing from `results` (removed, or no longer
    /// pinned) are forgotten.
    ///
    /// - Returns: the state changes, in the order of `results`.
    public mutating func record(_ results: [HostCheckResult], at now: Date) -> [StateChange] {
        var updated: [Key: Entry] = [:]
        var changes: [StateChange] = []
        for result in results {
            let key = Key(customer: result.customer, hostname: result.host.hostname)
            let previous = entries[key]
            if let previous, previous.result.state == result.state {
                updated[key] = Entry(result: result, since: previous.since)
                continue
            }
            updated[key] = Entry(result: result, since: now)
            if previous != nil || result.state != .matches {
                changes.append(StateChange(
                    customer: result.customer, hostname: result.host.hostname, port: result.host.port,
                    from: previous?.result.state, to: result.state, detail: result.detail
                ))
            }
        }
        entries = updated
        return changes
    }

    /// Hosts per state, every state present (zero when none).
    public var counts: [HostCheckState: Int] {
        var counts = Dictionary(uniqueKeysWithValues: HostCheckState.allCases.map { ($0, 0) })
        for entry in entries.values { counts[entry.result.state, default: 0] += 1 }
        return counts
    }

    /// Every host not in state `matches`, worst state first, then by customer and host name.
    public var needingAttention: [Entry] {
        entries.values.filter { $0.result.state != .matches }.sorted {
            ($0.result.state.severity, $0.result.customer.rawValue, $0.result.host.hostname.rawValue)
                < ($1.result.state.severity, $1.result.customer.rawValue, $1.result.host.hostname.rawValue)
        }
    }
}
