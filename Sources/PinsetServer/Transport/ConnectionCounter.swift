import Dispatch
import Foundation
import PinsetCore

/// The number of open connections, shared by the listener (which enforces the limit) and the workers.
///
/// Thread-safe: the count is guarded by a lock. Changes are reported to `onChange` on a private serial queue, so the
/// callback may do anything, including read ``SocketServer/openConnections``. Reports are coalesced: while one is
/// queued, further changes do not queue another, and the queued one reports the count as it is when it runs. Under
/// `Connection: close` load that keeps the gauge to a few updates per burst instead of two queue hops per
/// connection; once changes stop, the last report is the current count.
final class ConnectionCounter: Sendable {
    private struct State {
        var count = 0
        var notificationQueued = false
    }

    private let state = LockedValue(State())
    private let onChange: (@Sendable (Int) -> Void)?
    private let notificationQueue = DispatchQueue(label: "pinset.http.connection-count")

    init(onChange: (@Sendable (Int) -> Void)?) {
        self.onChange = onChange
    }

    var current: Int { state.withLock { $0.count } }

    /// Counts a new connection unless `limit` connections are already open.
    func tryIncrement(limit: Int) -> Bool {
        state.withLock { state in
            guard state.count < limit else { return false }
            state.count += 1
            notify(&state)
            return true
        }
    }

    /// Counts a connection that takes the slot of one being evicted.
    func forceIncrement() {
        state.withLock { state in
            state.count += 1
            notify(&state)
        }
    }

    func decrement() {
        state.withLock { state in
            state.count -= 1
            notify(&state)
        }
    }

    /// Returns once every change made so far has been reported.
    func flushNotifications() async {
        await withCheckedContinuation { continuation in
            notificationQueue.async { continuation.resume() }
        }
    }

    /// Called with the lock held.
    private func notify(_ state: inout State) {
        guard let onChange, !state.notificationQueued else { return }
        state.notificationQueued = true
        notificationQueue.async {
            let value = self.state.withLock { state in
                state.notificationQueued = false
                return state.count
            }
            onChange(value)
        }
    }
}
