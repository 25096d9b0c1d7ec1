import Foundation
import PinsetConnectionSlots
import PinsetCore
import PinsetStore

/// Failed authentications per client address in a sliding minute: past the limit, every token from the address
/// that does not authenticate is answered 429, so a guesser learns nothing from its tries for the rest of the
/// minute, while a valid token is still accepted (``authenticate(_:from:with:)``, the one rule of the API and the
/// dashboard). IPv6
/// addresses count per /64, the block one subscriber is usually given, so a guesser cannot rotate through its own
/// block for fresh tries. The table is bounded: when full, the address that failed longest ago is forgotten.
public final class AuthenticationThrottle: Sendable {
    public let failuresPerMinute: Int
    public let maximumAddresses: Int
    /// Told the address (its counting key) whose failures have reached the limit: at most once a minute per
    /// address, so that a guesser's flood leaves one log line a minute rather than one per try.
    let onLimitReached: (@Sendable (String) -> Void)?
    private let state = LockedValue<[String: [Date]]>([:])
    /// When each address was last told to `onLimitReached`.
    private let told = LockedValue<[String: Date]>([:])

    public init(failuresPerMinute: Int = 10, maximumAddresses: Int = 10_000, onLimitReached: (@Sendable (String) -> Void)? = nil) {
        self.failuresPerMinute = failuresPerMinute
        self.maximumAddresses = maximumAddresses
        self.onLimitReached = onLimitReached
    }

    /// Seconds until `address` may try again, or nil when it may now.
    public func retryAfter(for address: String, now: Date = Date()) -> Int? {
        let address = Self.key(for: address)
        return state.withLock { table in
            let recent = (table[address] ?? []).filter { now.timeIntervalSince($0) < 60 }
            table[address] = recent.isEmpty ? nil : recent
            guard recent.count >= failuresPerMinute, let oldest = recent.first else { return nil }
            return max(1, Int((60 - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    public func recordFailure(from address: String, now: Date = Date()) {
        let address = Self.key(for: address)
        let reachedLimit = state.withLock { table in
            if table[address] == nil && table.count >= maximumAddresses,
               let stalest = table.min(by: { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) })?.key {
                table[stalest] = nil
            }
            var recent = (table[address] ?? []).filter { now.timeIntervalSince($0) < 60 }
            recent.append(now)
            table[address] = Array(recent.suffix(failuresPerMinute))
            return recent.count >= failuresPerMinute
        }
        guard reachedLimit, let onLimitReached else { return }
        let tell = told.withLock { told in
            if let last = told[address], now.timeIntervalSince(last) < 60 { return false }
            told[address] = now
            // Bounded like the failure table; pruned only when it grows past it, not on every try.
            if told.count > maximumAddresses { told = told.filter { now.timeIntervalSince($0.value) < 60 } }
            return true
        }
        if tell { onLimitReached(address) }
    }

    /// Counts a refusal of `account`'s request (a missing role, 403, or something it may not see, 404) under its token;
    /// true when the token has now reached the limit. The one rule of the admin API and the dashboard.
    public func recordRefusal(of account: AdminAccount, status: Int, now: Date = Date()) -> Bool {
        guard status == 403 || status == 404 else { return false }
        let key = Self.refusalKey(account)
        recordFailure(from: key, now: now)
        return retryAfter(for: key, now: now) != nil
    }

    /// Seconds until `account`'s token may be refused again without being throttled, or nil when it is not throttled.
    public func retryAfter(for account: AdminAccount, now: Date = Date()) -> Int? {
        retryAfter(for: Self.refusalKey(account), now: now)
    }

    /// What an authenticated admin's refusals are counted under, apart from any address (which never starts with
    /// "admin "): its token, so that a stolen token probing for access locks out only itself. The admin API and the
    /// dashboard count under the same key.
    public static func refusalKey(_ account: AdminAccount) -> String {
        "admin " + account.name + (account.token.map { " token " + $0.sha256.hex } ?? "")
    }

    /// What failures are counted under: ``ClientAddress/key(for:)``, as the admin listener's connections are.
    static func key(for address: String) -> String {
        ClientAddress.key(for: address)
    }
}
