import Foundation

/// A value reachable only inside ``withLock(_:)``: no getter or setter pair, so no code can read it, decide,
/// and write it back without holding the lock in between. `Sendable` because every access takes the lock.
///
/// Callers keep the closure short: requests on the serving path wait for it.
public final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()

    public init(_ value: Value) {
        stored = value
    }

    /// Runs `body` with the value, holding the lock; changes `body` makes are kept.
    @discardableResult
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }
}
