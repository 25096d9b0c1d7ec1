import Dispatch
import Foundation

/// The number of open connections, shared by the listener (which enforces the limit) and the workers.
///
/// Thread-safe: the count is guarded by a lock. Changes are reported to `onChange` on a private serial queue, so the
/// callback may do anything, including read ``SocketServer/openConnections``. Reports are coalesced: while one is
/// queued, further changes do not queue another, and the queued one reports the count as it is when it runs. Under
/// `Connection: close` load that keeps the gauge to a few updates per burst instead of two queue hops per
/// connection; once changes stop, the last report is the current count.
final class ConnectionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private let onChange: (@Sendable (Int) -> Void)?
    private let notificationQueue = DispatchQueue(label: "pinset.http.connection-count")
    private var notificationQueued = false

    init(onChange: (@Sendable (Int) -> Void)?) {
        self.onChange = onChange
    }

    var current: Int { lock.withLock { count } }

    /// Counts a new connection unless `limit` connections are already open.
    func tryIncrement(limit: Int) -> Bool {
        lock.withLock {
            guard count < limit else { return false }
            count += 1
            notify()
            return true
        }
    }

    /// Counts a connection that takes the slot of one being evicted.
    func forceIncrement() {
        lock.withLock {
            count += 1
            notify()
        }
    }

    func decrement() {
        lock.withLock {
            count -= 1
            notify()
        }
    }

    /// Returns once every change made so far has been reported.
    func flushNotifications() async {
        await withCheckedContinuation { continuation in
            notificationQueue.async { continuation.resume() }
        }
    }

    /// Called with the lock held.
    private func notify() {
        guard let onChange, !notificationQueued else { return }
        notificationQueued = true
        notificationQueue.async {
            let value = self.lock.withLock {
                self.notificationQueued = false
                return self.count
            }
            onChange(value)
        }
    }
}
