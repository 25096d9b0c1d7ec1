import Foundation
import Logging
import PinsetCore
@testable import PinsetServer
import PinsetPublishing
import PinsetSigning
import PinsetTestSupport
import Testing

/// The server never publishes a bundle whose version lies further ahead of its signing time than clients
/// accept (`BundleBounds`), whatever its clock does; when it cannot sign within the rule it says why and keeps
/// the last good bundle.
struct VersionRuleTests {
    @Test func aClockSteppedBackPublishesOnlyVersionsWithinTheRule() async throws {
        let editedAt = Int64(Date().timeIntervalSince1970.rounded(.down))
        // The version an edit at `editedAt` gets (ChangeRecorder: the time of the change in milliseconds).
        let version = editedAt * 1000 + 999
        let clock = TestClock(Date(timeIntervalSince1970: TimeInterval(editedAt - 3600)))
        let identity = try SigningIdentity.generate(keyType: .p256, commonName: "Clock Test", validityDays: 30, now: Date().addingTimeInterval(-7 * 86_400))
        let source = ScriptedSource([try BundleRefresherTests.pinSet("acme", version: version)])
        let cache = BundleCache()
        let refresher = BundleRefresher(
            source: source,
            pass: SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600),
            cache: cache, metrics: nil, logger: Logger(label: "test"), resignInterval: 300, now: clock.now
        )
        let acme = try CustomerName("acme")

        // An hour back: within the day a version may lead, so the bundle is published, and within the rule.
        #expect(refresher.refreshNow(reason: "test"))
        let published = try #require(cache.bundle(for: acme))
        #expect(published.timestamp == editedAt - 3600)
        let payload = try BundlePayload.decode(try await SignatureVerifier.verify(try published.bytes, trustAnchors: [identity.certificate], at: clock.now()).get().content)
        #expect(payload.version == version)
        #expect(BundleBounds.versionProblem(version: payload.version, signedAt: payload.timestamp) == nil)

        // Two days back: a new edit cannot be signed within the rule. Nothing outside it is published; the last
        // good bundle stays, and the reason reaches the status and /readyz.
        clock.advance(by: -2 * 86_400)
        source.set([try BundleRefresherTests.pinSet("acme", version: version + 1)])
        #expect(refresher.refreshNow(reason: "test"))
        #expect(try cache.bundle(for: acme)?.bytes == published.bytes)
        let failure = try #require(refresher.status.customerFailures.first)
        #expect(failure.kind == .versionAheadOfClock)
        #expect(failure.reason.contains("ahead of its signing time") && failure.reason.contains("NTP"), "\(failure.reason)")
        for bundle in cache.snapshot.bundles.values {
            let content = try BundlePayload.decode(try await SignatureVerifier.verify(try bundle.bytes, trustAnchors: [identity.certificate], at: Date()).get().content)
            #expect(BundleBounds.versionProblem(version: content.version, signedAt: content.timestamp) == nil)
        }
        // Readiness reads the real clock, which is two days ahead of this test's: a window that covers it.
        let readiness = StatusReporter.readiness(status: refresher.status, snapshot: cache.snapshot, freshnessWindow: 3 * 86_400)
        #expect(readiness.isReady)
        #expect(readiness.reason.contains("'acme'") && readiness.reason.contains("ahead of this server's clock"), "\(readiness.reason)")
    }

    @Test func theSigningPassRefusesAVersionBeyondTheRuleAndSignsAtItsEdge() async throws {
        let identity = try TestPKI.signingIdentity()
        let pass = SigningPass(signer: BundleSigner(identity: identity), bundleLifetime: 3600)
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let seconds = Int64(now.timeIntervalSince1970)
        let edge = BundleBounds.highestVersion(signedAt: seconds)
        let result = pass.run([
            try BundleRefresherTests.pinSet("edge", version: edge),
            try BundleRefresherTests.pinSet("beyond", version: edge + 1),
        ], now: now)
        #expect(result.bundles.map(\.customer.rawValue) == ["edge"])
        #expect(result.failures.map(\.customer.rawValue) == ["beyond"])
        #expect(result.versionRuleFailures.count == 1)
    }
}
