import Foundation
@testable import PinsetAdmin
import Testing

/// Failed admin API authentications are counted per IPv4 address and per IPv6 /64, so that rotating through the
/// addresses of one's own block buys no fresh guesses; the table stays bounded.
struct AuthenticationThrottleTests {
    @Test func anIPv6GuesserCountsPerSlash64() {
        let throttle = AuthenticationThrottle(failuresPerMinute: 3)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for host in 1...3 { throttle.recordFailure(from: "2001:db8:1:2::\(host)", now: now) }
        #expect(throttle.retryAfter(for: "2001:db8:1:2:ffff:ffff:ffff:ffff", now: now) != nil, "another address of the same /64")
        #expect(throttle.retryAfter(for: "2001:0db8:0001:0002::beef", now: now) != nil, "the same /64, spelled out")
        #expect(throttle.retryAfter(for: "2001:db8:1:3::1", now: now) == nil, "the next /64 is someone else")
        #expect(throttle.retryAfter(for: "2001:db8:1:2::1", now: now.addingTimeInterval(61)) == nil, "a minute later")
    }

    @Test func anIPv4MappedAddressCountsAsItsIPv4Address() {
        let throttle = AuthenticationThrottle(failuresPerMinute: 2)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        throttle.recordFailure(from: "::ffff:192.0.2.7", now: now)
        throttle.recordFailure(from: "192.0.2.7", now: now)
        #expect(throttle.retryAfter(for: "192.0.2.7", now: now) != nil)
        #expect(throttle.retryAfter(for: "192.0.2.8", now: now) == nil)
        #expect(AuthenticationThrottle.key(for: "::ffff:192.0.2.7") == "192.0.2.7")
        #expect(AuthenticationThrottle.key(for: "2001:db8::1") == "2001:db8:0:0::/64")
        // IPv4 clients through NAT64's well-known prefix are each their own client, not one /64 for all.
        #expect(AuthenticationThrottle.key(for: "64:ff9b::c000:207") == "192.0.2.7")
        #expect(AuthenticationThrottle.key(for: "64:ff9b::c000:208") == "192.0.2.8")
        #expect(AuthenticationThrottle.key(for: "64:ff9b:1::c000:207") == "64:ff9b:1:0::/64", "only the /96 carries an address in its last 32 bits")
    }

    @Test func theTableForgetsTheStalestAddressWhenFull() {
        let throttle = AuthenticationThrottle(failuresPerMinute: 1, maximumAddresses: 2)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        throttle.recordFailure(from: "192.0.2.1", now: now)
        throttle.recordFailure(from: "192.0.2.2", now: now.addingTimeInterval(1))
        throttle.recordFailure(from: "192.0.2.3", now: now.addingTimeInterval(2))
        #expect(throttle.retryAfter(for: "192.0.2.1", now: now.addingTimeInterval(3)) == nil, "forgotten")
        #expect(throttle.retryAfter(for: "192.0.2.3", now: now.addingTimeInterval(3)) != nil)
    }
}
