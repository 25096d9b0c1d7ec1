import Dispatch
import Foundation

/// The number of open connections, shared by the listener (which enforces the limit) and the workers.
///
/// Thread-safe: the count is guarded by a lock. Changes are reported to `onChange` in the order they happen, on a
/// private serial queue, so the callback may do anything, including read ``SocketServer/openConnections``.
final class ConnectionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private let onChange: (@Sendable (Int) -> Void)?
    private let notificationQueue = DispatchQueue(label: "pinset.http.connection-count")

    init(onChange: (@Sendable (Int) -> Void)?) {
        self.onChange = onChange
    }

    var current: Int { lock.withLock { count } }

    /// Counts a new connection unless `limit` connections are already open.
    func tryIncrement(limit: Int) -> Bool {
        lock.withLock {
            guard count < limit else { return false }
            count += 1
            notify(count)
            return true
        }
    }

    /// Counts a connection that takes the slot of one being evicted.
    func forceIncrement() {
        lock.withLock {
            count += 1
            notify(count)
        }
    }

    func decrement() {
        lock.withLock {
            count -= 1
            notify(count)
        }
    }

    /// Returns once every change made so far has been reported.
    func flushNotifications() async {
        await withCheckedContinuation { continuation in
            notificationQueue.async { continuation.resume() }
        }
    }

    /// Called with the lock held, so that notifications are queued in the order of the changes.
    private func notify(_ value: Int) {
        guard let onChange else { return }
        notificationQueue.async { onChange(value) }
    }
}
