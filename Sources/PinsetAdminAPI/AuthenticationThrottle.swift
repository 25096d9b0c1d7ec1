import Foundation
import PinsetCore

/// Failed authentications per client address in a sliding minute: past the limit, the address is refused (429)
/// before its token is even looked at, so a guesser gets a few tries a minute instead of thousands a second. The
/// table is bounded: when full, the oldest address is forgotten.
public final class AuthenticationThrottle: Sendable {
    public let failuresPerMinute: Int
    public let maximumAddresses: Int
    private let state = LockedValue<[String: [Date]]>([:])

    public init(failuresPerMinute: Int = 10, maximumAddresses: Int = 10_000) {
        self.failuresPerMinute = failuresPerMinute
        self.maximumAddresses = maximumAddresses
    }

    /// Seconds until `address` may try again, or nil when it may now.
    public func retryAfter(for address: String, now: Date = Date()) -> Int? {
        state.withLock { table in
            let recent = (table[address] ?? []).filter { now.timeIntervalSince($0) < 60 }
            table[address] = recent.isEmpty ? nil : recent
            guard recent.count >= failuresPerMinute, let oldest = recent.first else { return nil }
            return max(1, Int((60 - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    public func recordFailure(from address: String, now: Date = Date()) {
        state.withLock { table in
            if table[address] == nil && table.count >= maximumAddresses,
               let stalest = table.min(by: { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) })?.key {
                table[stalest] = nil
            }
            var recent = (table[address] ?? []).filter { now.timeIntervalSince($0) < 60 }
            recent.append(now)
            table[address] = Array(recent.suffix(failuresPerMinute))
        }
    }
}
