import PinsetCore
@testable import PinsetServer
import PinsetStore
import Testing

/// One installation's reports of one kind are counted once per hour, in bounded memory.
struct ReportDeduplicatorTests {
    func key(hour: Int64 = 3600, host: String = "api.example.com") -> PinFailureCount.Key {
        PinFailureCount.Key(customer: try! CustomerName("acme"), hour: hour, hostname: host, validationResult: 1,
                            leafSPKISHA256: nil, pinsetVersion: 4, appVersion: "1.0")
    }

    @Test func anInstallationIsCountedOncePerKeyAndHour() {
        let dedup = ReportDeduplicator(maximumEntries: 100)
        #expect(dedup.isFirst(key(), installation: "install-1"))
        #expect(!dedup.isFirst(key(), installation: "install-1"))
        #expect(dedup.isFirst(key(), installation: "install-2"), "another installation counts")
        #expect(dedup.isFirst(key(host: "www.example.com"), installation: "install-1"), "another host counts")
        #expect(dedup.isFirst(key(hour: 7200), installation: "install-1"), "the next hour counts again")
        #expect(dedup.entryCount == 1, "the previous hour's set is gone")
    }

    @Test func aFullSetCountsWithoutRemembering() {
        let dedup = ReportDeduplicator(maximumEntries: 10)
        for index in 0..<100 { #expect(dedup.isFirst(key(), installation: "install-\(index)")) }
        #expect(dedup.entryCount == 10)
        #expect(!dedup.isFirst(key(), installation: "install-0"), "remembered installations are still deduplicated")
        #expect(dedup.isFirst(key(), installation: "install-99"), "beyond the bound reports are counted")
    }

    @Test func aForgottenReportIsCountedOnRetry() {
        let dedup = ReportDeduplicator(maximumEntries: 10)
        #expect(dedup.isFirst(key(), installation: "install-1"))
        dedup.forget(key(), installation: "install-1")
        #expect(dedup.isFirst(key(), installation: "install-1"))
    }
}
