@testable import PinsetServer
import Testing

/// Per-address limits on reports, with the clock injected.
struct ReportRateLimiterTests {
    @Test func anAddressGetsItsQuotaPerMinuteAndNoMore() {
        let limiter = ReportRateLimiter(reportsPerMinute: 3, maximumAddresses: 10)
        let admitted = (0..<5).map { limiter.admit("192.0.2.1", at: 120 + Int64($0)) }
        #expect(admitted == [true, true, true, false, false])
        #expect(limiter.admit("192.0.2.2", at: 125), "another address has its own quota")
        #expect(limiter.admit("192.0.2.1", at: 180), "the next minute starts a new quota")
    }

    @Test func theTableIsBoundedAndNewAddressesAreRefusedOnceItIsFull() {
        let limiter = ReportRateLimiter(reportsPerMinute: 100, maximumAddresses: 50)
        for index in 0..<1_000 { _ = limiter.admit("198.51.100.\(index)", at: 60) }
        #expect(limiter.trackedAddresses == 50)
        #expect(!limiter.admit("203.0.113.9", at: 61), "a new address is refused while the table is full")
        #expect(limiter.admit("198.51.100.0", at: 61), "an address already counted keeps its quota")
        #expect(limiter.admit("203.0.113.9", at: 120), "a new minute empties the table")
        #expect(limiter.trackedAddresses == 1)
    }

    /// Rotating through one's own IPv6 /64 buys neither a new quota nor room in the table; an IPv4-mapped address is
    /// its IPv4 address.
    @Test func anIPv6Slash64IsOneClient() {
        let limiter = ReportRateLimiter(reportsPerMinute: 2, maximumAddresses: 10)
        #expect(limiter.admit("2001:db8:1:2::1", at: 60) && limiter.admit("2001:db8:1:2:ffff::7", at: 60))
        #expect(!limiter.admit("2001:db8:1:2::3", at: 60), "the /64's quota is spent")
        #expect(limiter.admit("2001:db8:1:3::1", at: 60), "the next /64 is another client")
        #expect(limiter.trackedAddresses == 2)
        #expect(limiter.admit("::ffff:198.51.100.1", at: 60) && limiter.admit("198.51.100.1", at: 60))
        #expect(!limiter.admit("198.51.100.1", at: 60))
    }
}
