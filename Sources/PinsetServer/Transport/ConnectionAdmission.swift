import Foundation
import PinsetCore

/// What the listener did with a connection it could not simply admit, for metrics.
public enum ConnectionLimitEvent: Sendable, Equatable {
    /// Refused because its client address already had `maxConnectionsPerAddress` connections open.
    case refusedPerAddress
    /// Refused because the server was full and no connection could be evicted.
    case refusedServerFull
    /// An open connection that had not yet sent a complete request head was closed to make room.
    case evicted
    /// The server was full and no connection was waiting for its first head: one idle between keep-alive requests
    /// was closed to make room.
    case idleClosed
    /// The process had no descriptor left: a pending connection was accepted with the spare descriptor and closed.
    case shedForDescriptors
    /// The process had no descriptor left and no spare to shed with: a loop stopped accepting for a moment.
    case acceptPaused
    /// Closed without an answer: the listener expects the PROXY protocol and the connection did not start with a
    /// valid header.
    case invalidProxyHeader
    /// Closed without an answer: the listener expects the PROXY protocol from its trusted proxies only, and the
    /// connection came from another peer.
    case untrustedProxy
}

/// Per-client-address connection counts and the accept-ordered set of connections still waiting for their first
/// complete request head, shared by the listener (which admits) and the workers (which report progress and close).
///
/// Why both: a per-address limit keeps one address (an IPv6 client: one /64) from taking every slot; eviction of the
/// oldest connection that has sent no complete head keeps many addresses that only open sockets (or a flood arriving
/// through one load balancer) from keeping a good client out, since a good client sends its head at once and then is
/// not evicted while it is served. Past those, a connection idle between keep-alive requests gives way
/// (``TransportWorker/closeOneIdleConnection()``).
///
/// Thread-safe: the counts and the pending set are reachable only under one lock.
final class ConnectionAdmission<Loop: ReadinessLoop>: Sendable {
    private struct State {
        var perAddress: [String: Int] = [:]
        /// Connections without a complete head, by admission number; `order` holds the numbers in admission order
        /// from `orderStart` (entries no longer in `pending` are skipped).
        var pending: [UInt64: TransportConnection<Loop>] = [:]
        var order: [UInt64] = []
        var orderStart = 0
        var nextNumber: UInt64 = 0

        /// Drops consumed numbers so `order` stays proportional to the open connections.
        mutating func compact() {
            if orderStart == order.count {
                order.removeAll(keepingCapacity: true)
                orderStart = 0
            } else if orderStart > 1024 && orderStart * 2 > order.count {
                order.removeFirst(orderStart)
                orderStart = 0
            }
        }
    }

    private let maxPerAddress: Int
    private let state = LockedValue(State())

    init(maxPerAddress: Int) {
        self.maxPerAddress = maxPerAddress
    }

    /// Counts a connection from `address` unless that address is at its limit.
    func admit(address: String) -> Bool {
        state.withLock { state in
            let current = state.perAddress[address, default: 0]
            guard current < maxPerAddress else { return false }
            state.perAddress[address] = current + 1
            return true
        }
    }

    /// Undoes ``admit(address:)`` for a connection that is closed or was never adopted.
    func release(address: String) {
        state.withLock { state in
            guard let current = state.perAddress[address] else { return }
            if current <= 1 { state.perAddress.removeValue(forKey: address) } else { state.perAddress[address] = current - 1 }
        }
    }

    /// Number of connections counted for `address`.
    func count(for address: String) -> Int {
        state.withLock { $0.perAddress[address, default: 0] }
    }

    /// Registers a newly adopted connection as waiting for its first head; returns its admission number.
    func registerPending(_ connection: TransportConnection<Loop>) -> UInt64 {
        state.withLock { state in
            let number = state.nextNumber
            state.nextNumber += 1
            state.pending[number] = connection
            state.order.append(number)
            // Connections that got their head leave stale numbers behind; rebuilding when they dominate keeps the
            // cost amortized constant and the memory proportional to the pending connections.
            if state.order.count - state.orderStart > 2 * state.pending.count + 1024 {
                state.order = state.order[state.orderStart...].filter { state.pending[$0] != nil }
                state.orderStart = 0
            }
            return number
        }
    }

    /// The connection sent a complete head (or closed): it is no longer a candidate for eviction.
    func clearPending(_ number: UInt64) {
        state.withLock { _ = $0.pending.removeValue(forKey: number) }
    }

    /// Removes and returns the oldest connection still waiting for its first head, or nil.
    func takeOldestPending() -> TransportConnection<Loop>? {
        state.withLock { state in
            while state.orderStart < state.order.count {
                let number = state.order[state.orderStart]
                state.orderStart += 1
                if let connection = state.pending.removeValue(forKey: number) {
                    state.compact()
                    return connection
                }
            }
            state.compact()
            return nil
        }
    }
}
