import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Hourly pin-failure report counts: added up per key (optional columns compared null-safely), removed with their
/// customer, deleted past retention, and kept apart from the pin-set content.
struct PinFailureCountTests {
    func count(_ customer: String, hour: Int64 = 7200, host: String = "api.example.com", leaf: String? = nil,
               pinsetVersion: Int64? = nil, appVersion: String = "1.0", reports: Int64 = 1) throws -> PinFailureCount {
        PinFailureCount(key: .init(customer: try CustomerName(customer), hour: hour, hostname: host, validationResult: 1,
                                   leafSPKISHA256: leaf, pinsetVersion: pinsetVersion, appVersion: appVersion), reports: reports)
    }

    @Test(arguments: StoreBackend.allCases) func countsOfOneKeyAddUpAndDifferentKeysStayApart(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        try store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try store.addHost(try Sample.host("api.example.com"), to: try Sample.customer("acme"), actor: Sample.actor)
        let leaf = String(repeating: "A", count: 43) + "="
        try store.addPinFailureCounts([try count("acme", reports: 2), try count("acme", leaf: leaf, pinsetVersion: 3)])
        try store.addPinFailureCounts([try count("acme", reports: 5), try count("acme", leaf: leaf, pinsetVersion: 3, reports: 4),
                                       try count("acme", leaf: leaf, pinsetVersion: 4)])
        let stored = try store.pinFailureCounts(since: 0)
        #expect(stored.count == 3)
        #expect(stored.first { $0.key.leafSPKISHA256 == nil }?.reports == 7, "NULL key columns match NULL")
        #expect(stored.first { $0.key.pinsetVersion == 3 }?.reports == 5)
        #expect(stored.first { $0.key.pinsetVersion == 4 }?.reports == 1)
    }

    @Test(arguments: StoreBackend.allCases) func reportsDoNotChangeTheContentVersionOrTheAuditLog(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        let version = try store.pinSet(for: acme)?.version
        let changes = try store.changeCounter()
        let audit = try store.auditLog().count
        try store.addPinFailureCounts([try count("acme")])
        #expect(try store.pinSet(for: acme)?.version == version)
        #expect(try store.changeCounter() == changes)
        #expect(try store.auditLog().count == audit)
    }

    @Test(arguments: StoreBackend.allCases) func countsOfUnknownCustomersAreDroppedAndRemovedCustomersTakeTheirCounts(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(try Sample.host("api.example.com"), to: acme, actor: Sample.actor)
        #expect(try store.addPinFailureCounts([try count("acme"), try count("ghost"), try count("acme", host: "other.example.net")]) == 2)
        try store.removeCustomer(acme, actor: Sample.actor)
        #expect(try store.pinFailureCounts(since: 0).isEmpty)
        #expect(try store.pinFailureBuckets(since: 0).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func retentionDeletesOnlyOlderHoursAndSinceFiltersByHour(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        try store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try store.addCustomer(try Sample.customer("globex"), actor: Sample.actor)
        for customer in ["acme", "globex"] {
            try store.addHost(try Sample.host("api.example.com"), to: try Sample.customer(customer), actor: Sample.actor)
        }
        try store.addPinFailureCounts([try count("acme", hour: 3600), try count("acme", hour: 7200), try count("globex", hour: 10_800)])
        #expect(try store.pinFailureCounts(since: 7_300).map(\.key.hour) == [7200, 10_800], "since rounds down to its hour")
        #expect(try store.pinFailureCounts(of: try Sample.customer("globex"), since: 0).map(\.key.hour) == [10_800])
        #expect(try store.deletePinFailureCounts(before: 7200) == 1)
        #expect(try store.pinFailureCounts(since: 0).map(\.key.hour) == [7200, 10_800])
    }

    @Test(arguments: StoreBackend.allCases) func hostsTheCustomerDoesNotPinShareOneCountedBucket(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(try Sample.host("example.com"), includeSubdomains: true, to: acme, actor: Sample.actor)
        let hosts = (0..<300).map { "h\($0).attacker.example" } + ["example.com", "cdn.example.com", "not an host name"]
        #expect(try store.addPinFailureCounts(hosts.map { try count("acme", host: $0, reports: 2) }) == hosts.count)
        #expect(Set(try store.pinFailureCounts(since: 0).map(\.key.hostname)) == ["example.com", "cdn.example.com"],
                "the host itself and a subdomain of an include-subdomains host get rows")
        #expect(try store.pinFailureBuckets(since: 0) == [PinFailureBucket(customer: acme, hour: 7200, otherReports: 0, unpublishedHostReports: 602)])
    }

    @Test(arguments: StoreBackend.allCases) func newKindsBeyondTheRowCapGoToTheOtherBucketAndExistingRowsStillCount(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(try Sample.host("api.example.com"), to: acme, actor: Sample.actor)
        let kinds = (0..<250).map { try! count("acme", appVersion: "1.\($0)") }
        for batch in stride(from: 0, to: kinds.count, by: 40) {
            try store.addPinFailureCounts(Array(kinds[batch..<min(batch + 40, kinds.count)]), maximumRowsPerCustomerHour: 100)
        }
        try store.addPinFailureCounts([try count("acme", appVersion: "1.0", reports: 5), try count("acme", hour: 10_800)], maximumRowsPerCustomerHour: 100)
        let rows = try store.pinFailureCounts(since: 0)
        #expect(rows.filter { $0.key.hour == 7200 }.count == 100)
        #expect(rows.first { $0.key.appVersion == "1.0" }?.reports == 6, "a kind that has its row keeps counting in it")
        #expect(rows.contains { $0.key.hour == 10_800 }, "the cap is per hour")
        #expect(try store.pinFailureBuckets(since: 0) == [PinFailureBucket(customer: acme, hour: 7200, otherReports: 150, unpublishedHostReports: 0)])
        let total = rows.reduce(0) { $0 + $1.reports } + (try store.pinFailureBuckets(since: 0)).reduce(0) { $0 + $1.otherReports }
        #expect(total == 250 + 5 + 1, "every report is counted, in a row or in the bucket")
    }

    /// Several instances share one database: buckets of the same hour written at once by different connections
    /// add up rather than overwrite one another.
    @Test(arguments: StoreBackend.allCases) func bucketsWrittenAtOnceByTwoInstancesAddUp(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try fixture.store.addHost(try Sample.host("api.example.com"), to: try Sample.customer("acme"), actor: Sample.actor)
        let stores = [fixture.store, try fixture.openAnother()]
        let unpublished = try count("acme", host: "not-pinned.example.net")
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            for _ in 0..<40 {
                do { try stores[index].addPinFailureCounts([unpublished]) } catch { failures.append("\(error)") }
            }
        }
        #expect(failures.all.isEmpty)
        #expect(try fixture.store.pinFailureBuckets(since: 0).map(\.unpublishedHostReports) == [80])
    }

    @Test func hourOfRoundsDownInUTC() {
        #expect(PinFailureCount.hour(containing: 7_199) == 3600)
        #expect(PinFailureCount.hour(containing: 7_200) == 7200)
        #expect(PinFailureCount.hour(containing: -1) == -3600)
    }
}
