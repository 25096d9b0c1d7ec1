import Foundation
import PinsetCore
import PinsetStore
import PinsetTestSupport
import Testing

/// A host's report-only window in the store, on both backends: content (a new version to set and to end), audited
/// with its reason, bounded, ended by the store itself once its time has passed, and bad input changes nothing.
@Suite struct ReportOnlyStoreTests {
    @Test(arguments: StoreBackend.allCases)
    func aWindowIsContentAuditedBoundedAndEndedWhenItsTimeHasPassed(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(api, to: acme, actor: Sample.actor)
        try store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor)
        let now = Int64(StoreFixture.start.timeIntervalSince1970)
        let before = try #require(try store.pinSet(for: acme)).version

        // Refused, and nothing written: no reason, an end not in the future, beyond the bound, beyond a lower maximum, no such host.
        let refusals: [(String, () throws -> Void)] = [
            ("empty reason", { try store.setReportOnly(api, of: acme, until: now + 3600, reason: "  ", actor: Sample.actor) }),
            ("past end", { try store.setReportOnly(api, of: acme, until: now, reason: "renewal", actor: Sample.actor) }),
            ("beyond the bound", { try store.setReportOnly(api, of: acme, until: now + BundleBounds.maximumReportOnlySeconds + 1, reason: "renewal", actor: Sample.actor) }),
            ("beyond the maximum", { try store.setReportOnly(api, of: acme, until: now + 7201, reason: "renewal", maximumSeconds: 7200, actor: Sample.actor) }),
            ("no such host", { try store.setReportOnly(try Sample.host("www.example.com"), of: acme, until: now + 60, reason: "renewal", actor: Sample.actor) }),
        ]
        for (label, refused) in refusals {
            #expect(throws: StoreError.self, "\(label)") { try refused() }
        }
        #expect(try store.pinSet(for: acme)?.version == before)
        #expect(try store.reportOnlyWindows().isEmpty)

        let until = now + BundleBounds.maximumReportOnlySeconds
        let version = try store.setReportOnly(api, of: acme, until: until, reason: "renewal served an unpinned key", actor: Sample.actor)
        #expect(version == before + 1)
        #expect(try store.pinSet(for: acme)?.hosts.first?.reportOnlyUntil == until)
        let window = try #require(try store.reportOnlyWindows(of: acme).first)
        #expect(window.hostname == api && window.until == until && window.reason == "renewal served an unpinned key" && window.setBy == Sample.actor)
        let setEntry = try #require(try store.auditLog(customer: acme, limit: 1).first)
        #expect(setEntry.action == .reportOnlySet && setEntry.details.contains("renewal served an unpinned key") && setEntry.version == version)

        // Not yet over: nothing ends, nothing is written.
        let counter = try store.changeCounter()
        #expect(try store.endReportOnlyWindows(endingBy: Date(timeIntervalSince1970: TimeInterval(until - 1))) == 0)
        #expect(try store.changeCounter() == counter)
        // Over at its end: ended as a change of its own, audited under the expiry's actor.
        fixture.clock.advance(by: TimeInterval(BundleBounds.maximumReportOnlySeconds))
        #expect(try store.endReportOnlyWindows(endingBy: Date(timeIntervalSince1970: TimeInterval(until))) == 1)
        let ended = try #require(try store.pinSet(for: acme))
        #expect(ended.version > version && ended.hosts.first?.reportOnlyUntil == nil)
        #expect(try store.reportOnlyWindows().isEmpty)
        let endEntry = try #require(try store.auditLog(customer: acme, limit: 1).first)
        #expect(endEntry.action == .reportOnlyEnded && endEntry.actor == PinStore.reportOnlyExpiryActor)

        // Ended early by an admin; ending a window the host does not have changes nothing.
        let now2 = Int64(fixture.clock.now().timeIntervalSince1970)
        try store.setReportOnly(api, of: acme, until: now2 + 600, reason: "CA incident", actor: Sample.actor)
        #expect(try store.endReportOnly(api, of: acme, reason: "fixed", actor: "bob") != nil)
        #expect(try store.pinSet(for: acme)?.hosts.first?.reportOnlyUntil == nil)
        let versionAfter = try store.pinSet(for: acme)?.version
        #expect(try store.endReportOnly(api, of: acme, reason: nil, actor: "bob") == nil)
        #expect(try store.pinSet(for: acme)?.version == versionAfter)
    }
}
