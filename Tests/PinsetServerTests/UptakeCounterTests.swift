import Foundation
import PinsetCore
import PinsetHTTP
import PinsetServer
import Testing

struct UptakeCounterTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func request(_ headers: [(String, String)]) -> HTTPRequestHead {
        HTTPRequestHead(method: .get, target: "/acme.json.signed", version: .http1_1, headers: [("Host", "x")] + headers)
    }

    @Test func splitsTheWindowByReportedVersion() throws {
        let counter = UptakeCounter()
        let acme = try CustomerName("acme")
        for _ in 0..<3 { counter.record(.version(7), customer: acme, at: Self.start) }
        counter.record(.version(6), customer: acme, at: Self.start)
        counter.record(.version(5), customer: acme, at: Self.start.addingTimeInterval(60))
        counter.record(.unknown, customer: acme, at: Self.start)
        let summary = try #require(counter.summary(latest: [acme: 7], at: Self.start.addingTimeInterval(120))[acme])
        #expect(summary.fetches == 6)
        #expect(summary.unknown == 1)
        #expect(summary.onLatest == 3)
        // Unknown fetches are not in the denominator: 3 of the 5 that reported a version.
        #expect(summary.shareOnLatest == 0.6)
        #expect(summary.oldestVersion == 5)
        #expect(summary.versions == [7: 3, 6: 1, 5: 1])
    }

    @Test func forgetsFetchesOlderThanAnHour() throws {
        let counter = UptakeCounter()
        let acme = try CustomerName("acme")
        counter.record(.version(1), customer: acme, at: Self.start)
        counter.record(.version(2), customer: acme, at: Self.start.addingTimeInterval(1800))
        // 59 minutes later the first minute is still in the window...
        let inside = try #require(counter.summary(latest: [acme: 2], at: Self.start.addingTimeInterval(59 * 60))[acme])
        #expect(inside.versions == [1: 1, 2: 1])
        // ...one hour later it is not, and the oldest version seen moves up.
        let later = try #require(counter.summary(latest: [acme: 2], at: Self.start.addingTimeInterval(3600))[acme])
        #expect(later.versions == [2: 1])
        #expect(later.oldestVersion == 2)
        #expect(later.shareOnLatest == 1)
        // A new fetch in the slot the first minute used replaces it rather than adding to it.
        counter.record(.version(3), customer: acme, at: Self.start.addingTimeInterval(3600))
        let reused = try #require(counter.summary(latest: [acme: 3], at: Self.start.addingTimeInterval(3600))[acme])
        #expect(reused.versions == [2: 1, 3: 1])
        // With nothing left in the window the customer is dropped.
        #expect(counter.summary(latest: [acme: 3], at: Self.start.addingTimeInterval(3 * 3600)).isEmpty)
    }

    @Test func boundsTheDistinctVersionsPerMinute() throws {
        let counter = UptakeCounter()
        let acme = try CustomerName("acme")
        let bound = UptakeCounter.maximumVersionsPerBucket
        for version in 1...Int64(bound + 100) { counter.record(.version(version), customer: acme, at: Self.start) }
        // A version already counted in the minute keeps counting under its own key.
        counter.record(.version(1), customer: acme, at: Self.start)
        let summary = try #require(counter.summary(latest: [acme: Int64(bound + 100)], at: Self.start)[acme])
        #expect(summary.versions.count == bound)
        #expect(summary.versions[1] == 2)
        #expect(summary.otherVersions == 100)
        #expect(summary.fetches == bound + 101)
        // The latest version fell into "other": it is not claimed as on-latest.
        #expect(summary.onLatest == 0)
    }

    @Test func leavesOutMinutesAheadOfTheClock() throws {
        let counter = UptakeCounter()
        let acme = try CustomerName("acme")
        counter.record(.version(2), customer: acme, at: Self.start)
        // Counted while the wall clock ran two hours ahead; it has since been stepped back.
        counter.record(.version(9), customer: acme, at: Self.start.addingTimeInterval(2 * 3600 + 5 * 60))
        let summary = try #require(counter.summary(latest: [acme: 9], at: Self.start.addingTimeInterval(60))[acme])
        #expect(summary.versions == [2: 1])
        #expect(summary.shareOnLatest == 0)
    }

    @Test func keepsCustomersApart() throws {
        let counter = UptakeCounter()
        let acme = try CustomerName("acme")
        let globex = try CustomerName("globex")
        counter.record(.version(3), customer: acme, at: Self.start)
        counter.record(.unknown, customer: globex, at: Self.start)
        let summaries = counter.summary(latest: [acme: 3, globex: 9], at: Self.start)
        #expect(summaries[acme]?.fetches == 1)
        #expect(summaries[acme]?.unknown == 0)
        #expect(summaries[globex]?.unknown == 1)
        #expect(summaries[globex]?.shareOnLatest == nil)
        #expect(summaries[globex]?.oldestVersion == nil)
    }

    @Test func hasNoShareWhileNothingIsServed() throws {
        let counter = UptakeCounter()
        let acme = try CustomerName("acme")
        counter.record(.version(3), customer: acme, at: Self.start)
        // The customer's bundle can no longer be signed: there is no latest to be on.
        let summary = try #require(counter.summary(latest: [:], at: Self.start)[acme])
        #expect(summary.latestVersion == nil)
        #expect(summary.reported == 1)
        #expect(summary.shareOnLatest == nil)
        #expect(summary.oldestVersion == 3)
    }

    @Test func parsesOnlyPlainDecimalVersions() {
        #expect(UptakeCounter.reported(in: Self.request([("Pinset-Version", "42")])) == .version(42))
        #expect(UptakeCounter.reported(in: Self.request([("pinset-version", " 42 ")])) == .version(42))
        #expect(UptakeCounter.reported(in: Self.request([("Pinset-Version", "999999999999999999")])) == .version(999_999_999_999_999_999))
        #expect(UptakeCounter.reported(in: Self.request([])) == .unknown)
        let malformed = ["", "0", "-1", "+1", "1.0", "0x10", "1e3", "4 2", "42,43", "١٢", "v42", "9999999999999999999", String(repeating: "9", count: 4096)]
        for value in malformed {
            #expect(UptakeCounter.reported(in: Self.request([("Pinset-Version", value)])) == .unknown, "\(value)")
        }
        // Two fields: which one is meant is unknowable.
        #expect(UptakeCounter.reported(in: Self.request([("Pinset-Version", "1"), ("Pinset-Version", "2")])) == .unknown)
    }
}
