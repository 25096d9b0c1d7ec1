import Foundation

/// A clock that moves only when the test says so; pass `clock.now` where code takes a `() -> Date`.
public final class TestClock: @unchecked Sendable {
    // `@unchecked`: `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date) { current = start }

    @Sendable public func now() -> Date { lock.withLock { current } }

    public func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}
