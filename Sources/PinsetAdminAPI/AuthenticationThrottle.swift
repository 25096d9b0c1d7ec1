import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PinsetCore

/// Failed authentications per client address in a sliding minute: past the limit, the address is refused (429)
/// before its token is even looked at, so a guesser gets a few tries a minute instead of thousands a second. IPv6
/// addresses count per /64, the block one subscriber is usually given, so a guesser cannot rotate through its own
/// block for fresh tries. The table is bounded: when full, the address that failed longest ago is forgotten.
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

    /// What failures are counted under: an IPv4 address as it is, an IPv6 address by its /64 (an IPv4-mapped one
    /// as its IPv4 address).
    static func key(for address: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let parsed = address.withCString { inet_pton(AF_INET6, $0, &bytes) }
        guard parsed == 1 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/64"
    }
}
