import Foundation
import Logging
import PinsetCore
import PinsetPublishing
import PinsetServer
import PinsetSigning
import PinsetStore
import PinsetTestSupport
import Testing

/// The refresher and a real SQLite store with a report-only window: the window is announced while it lasts; once
/// the refresher's clock (injected) passes its end, the store ends it as a change of its own and the next bundle no
/// longer announces it, under a higher version, so that no client sees one version with two contents.
struct ReportOnlyRefresherTests {
    @Test func theWindowIsAnnouncedUntilItsEndThenEndedByTheStoreAndNoLongerAnnounced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try PinStore.open(path: directory.file("pinset.sqlite"))
        defer { try? store.close() }
        let acme = try CustomerName("acme"), api = try Hostname("api.example.com")
        try store.addCustomer(acme, actor: "test")
        try store.addHost(api, to: acme, actor: "test")
        try store.addPins([
            Pin(spkiSHA256: SHA256Fingerprint(of: Array("a".utf8)), source: PinSource(kind: .hash)),
            Pin(spkiSHA256: SHA256Fingerprint(of: Array("b".utf8)), source: PinSource(kind: .hash)),
        ], to: api, of: acme, actor: "test")
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let until = Int64(now.timeIntervalSince1970) + 3600
        let announcedVersion = try store.setReportOnly(api, of: acme, until: until, reason: "renewal served an unpinned key", actor: "test")

        let clock = TestClock(now)
        let identity = try TestPKI.signingIdentity()
        let cache = BundleCache()
        let refresher = BundleRefresher(
            source: store, pass: SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600), cache: cache,
            metrics: nil, logger: Logger(label: "test"), resignInterval: 300, now: clock.now
        )
        func served() async throws -> BundlePayload {
            try BundlePayload.decode(try await BundleRefresherTests.content(of: cache.bundle(for: acme), signedBy: identity))
        }

        #expect(refresher.refreshNow(reason: "test"))
        let during = try await served()
        #expect(during.version == announcedVersion && during.hosts.first?.reportOnlyUntil == until)
        #expect(BundleBounds.reportOnlyProblem(hosts: during.hosts, signedAt: during.timestamp) == nil)

        clock.advance(by: 3599)
        #expect(refresher.refreshNow(reason: "test"))
        #expect(try await served().hosts.first?.reportOnlyUntil == until, "one second before its end the window still runs")
        #expect(try store.reportOnlyWindows().count == 1)

        clock.advance(by: 1)
        #expect(refresher.refreshNow(reason: "test"))
        let after = try await served()
        #expect(after.hosts.first?.reportOnlyUntil == nil)
        #expect(after.version > announcedVersion)
        #expect(after.hosts.first?.spkiSHA256 == during.hosts.first?.spkiSHA256, "the pins stay")
        #expect(try store.reportOnlyWindows().isEmpty)
        let entry = try #require(try store.auditLog(customer: acme, limit: 1).first)
        #expect(entry.action == .reportOnlyEnded && entry.actor == PinStore.reportOnlyExpiryActor && entry.version == after.version)
    }
}
