import Foundation

/// Polls `condition` every 20 ms until it holds or `seconds` have passed; returns whether it held. For state
/// that a background queue reaches soon, never for timing a result: the deadline is generous because a loaded
/// machine may not run that queue for seconds, and a condition that holds ends the wait at once.
public func eventually(within seconds: Double = 30, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}
