/// A subscription to a store's change notifications; `cancel()` ends it.
public protocol ChangeObservation: Sendable {
    func cancel()
}

extension PinStore {
    /// Calls `onChange` soon after any process commits a change, where the backend can push notifications
    /// (PostgreSQL's LISTEN/NOTIFY); `nil` where it cannot (SQLite). Notifications are a shortcut: they may be
    /// lost while the connection is down, so callers keep polling `changeCounter()` as well.
    public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> (any ChangeObservation)? {
        database.observeChanges(onChange)
    }
}
