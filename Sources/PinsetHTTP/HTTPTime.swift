import Foundation

/// One reading of the two clocks the protocol needs, passed in so that state machines stay deterministic in tests.
///
/// `instant` (monotonic) drives deadlines; `unixSeconds` (wall clock) only feeds the `Date` field, so a wall-clock
/// step never shortens or extends a timeout.
public struct HTTPTime: Sendable {
    public var instant: ContinuousClock.Instant
    public var unixSeconds: Int64

    public init(instant: ContinuousClock.Instant, unixSeconds: Int64) {
        self.instant = instant
        self.unixSeconds = unixSeconds
    }

    /// The current time from both clocks.
    public static func now() -> HTTPTime {
        HTTPTime(instant: .now, unixSeconds: Int64(Date().timeIntervalSince1970.rounded(.down)))
    }

    /// This reading moved forward by `duration` on both clocks.
    public func advanced(by duration: Duration) -> HTTPTime {
        HTTPTime(instant: instant + duration, unixSeconds: unixSeconds + duration.components.seconds)
    }
}
