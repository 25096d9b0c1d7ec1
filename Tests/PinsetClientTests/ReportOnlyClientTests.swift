import Foundation
@testable import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

/// A host's report-only window as the client library applies it: the bound a bundle must keep (checked like the
/// lifetime bound, against bundles signed with a valid key), a mismatch in the window reported and allowed, and
/// an ended window enforcing again at max(device clock, latest time known to have passed), clock set back or not.
@Suite("Report-only windows in the client")
struct ReportOnlyClientTests {
    static let reportURL = URL(string: "http://127.0.0.1:9/report/acme")!

    /// The attacker's view: a leaked signer key signs a bundle whose window outlasts the bound. Refused on download
    /// and as a seed, whatever else about it is genuine; a window at the bound is accepted.
    @Test func aWindowBeyondTheBoundIsRefusedFromAValidKeyAndOneAtTheBoundAccepted() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        var atBound = try f.payload(version: 1)
        atBound.hosts[0].reportOnlyUntil = atBound.timestamp + BundleBounds.maximumReportOnlySeconds
        #expect(try await f.update(updater, with: atBound).hosts[0].reportOnlyUntil == atBound.timestamp + BundleBounds.maximumReportOnlySeconds)

        var beyond = try f.payload(version: 2)
        beyond.hosts[0].reportOnlyUntil = beyond.timestamp + BundleBounds.maximumReportOnlySeconds + 1
        let refused = try await #require(throws: PinUpdateError.self) { try await f.update(updater, with: beyond) }
        #expect(refused.code == .reportOnlyTooLong, "\(refused)")
        #expect(refused.reason.contains("api.example.com"))
        let seeded = try await #require(throws: PinUpdateError.self) { try await updater.seed(withBundle: try f.signed(beyond)) }
        #expect(seeded.code == .reportOnlyTooLong)
        #expect(await updater.currentPinSet?.version == 1)

        // A window that ended before the bundle was signed is within any bound: the host simply enforces.
        var ended = try f.payload(version: 3)
        ended.hosts[0].reportOnlyUntil = ended.timestamp - 60
        #expect(try await f.update(updater, with: ended).version == 3)
    }

    @Test func aMismatchInTheWindowIsReportedAndAllowedThenEnforcedEvenWithTheClockSetBack() async throws {
        let chain = try TestChain()
        var f = try ClientFixture()
        defer { f.directory.remove() }
        f.configuration.failureReports = try PinFailureReportConfiguration(reportURL: Self.reportURL, appBundleID: "com.example.app", appVersion: "1.0")
        let sender = RecordingReportSender()
        let updater = PinsetUpdater(configuration: f.configuration, fetcher: f.fetcher, reportSender: sender, now: f.clock.now)
        var payload = try f.payload(version: 1, hosts: [
            try ClientFixture.host("api.example.com", pins: ["retired-key", "backup-key"]),
            try ClientFixture.host("www.example.com", pins: ["retired-key", "backup-key"]),
        ])
        let until = f.nowSeconds + 3600
        payload.hosts[0].reportOnlyUntil = until
        try await f.update(updater, with: payload)

        let during = updater.evaluator.evaluate(host: "api.example.com", chain: chain.validated)
        guard case .reportOnlyMismatch(_, let entry, let presented, let announced, _) = during else {
            Issue.record("expected a report-only mismatch, got \(during)")
            return
        }
        #expect(during.isTrusted)
        #expect(entry.rawValue == "api.example.com" && announced == until)
        #expect(presented.first == chain.leaf.spkiSHA256)
        // The other host has no window: refused as before.
        #expect(updater.evaluator.evaluate(host: "www.example.com", chain: chain.validated).isTrusted == false)
        // The mismatch in the window was reported like any other (one per host per interval).
        let deadline = ContinuousClock.now + .seconds(30)
        while sender.sent.count < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let hosts = try sender.sent.map { try PinFailureReport.parse($0).hostname }
        #expect(Set(hosts) == ["api.example.com", "www.example.com"])

        // The window's end: enforcing, and a device clock set back to before it does not open it again.
        f.clock.advance(by: 3600)
        #expect(updater.evaluator.evaluate(host: "api.example.com", chain: chain.validated).isTrusted == false)
        f.clock.advance(by: -7200)
        let setBack = updater.evaluator.evaluate(host: "api.example.com", chain: chain.validated)
        #expect(setBack == .pinMismatch(host: "api.example.com", entry: try Hostname("api.example.com"), presented: presented), "\(setBack)")
    }

    /// After a restart the device clock is all the evaluator has besides the bundles it holds: a window that ended
    /// by the latest signing time held stays ended with the clock set back a day.
    @Test func aWindowEndedByTheLatestSignedTimeStaysEndedAfterARestartWithTheClockSetBack() async throws {
        let chain = try TestChain()
        let f = try ClientFixture()
        defer { f.directory.remove() }
        var first = try f.payload(version: 1, hosts: [try ClientFixture.host("api.example.com", pins: ["retired-key", "backup-key"])], signedAgo: 600)
        first.hosts[0].reportOnlyUntil = f.nowSeconds - 300
        var second = try f.payload(version: 2, hosts: first.hosts, signedAgo: 0)
        second.hosts[0].reportOnlyUntil = first.hosts[0].reportOnlyUntil
        let updater = f.makeUpdater()
        try await f.update(updater, with: first)
        try await f.update(updater, with: second)

        f.clock.advance(by: -86_400)
        let restarted = f.makeUpdater()
        guard case .loaded = await restarted.loadStoredPins() else {
            Issue.record("the stored pins did not load")
            return
        }
        #expect(restarted.evaluator.evaluate(host: "api.example.com", chain: chain.validated).isTrusted == false)
    }
}
