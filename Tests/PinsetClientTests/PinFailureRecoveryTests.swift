import Foundation
@testable import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// A monotonic clock that moves only when the test says so, for the recovery throttle.
final class ManualMonotonicClock: @unchecked Sendable {
    // `@unchecked`: `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: Duration = .zero

    @Sendable func now() -> Duration { lock.withLock { current } }

    func advance(by duration: Duration) { lock.withLock { current += duration } }
}

/// The bounds on forced updates, driven by an injected clock: no sleeps, no wall clock.
@Suite("Pin failure recovery throttle")
struct PinFailureRecoveryThrottleTests {
    @Test func oneForcedUpdatePerHostPerInterval() {
        var throttle = PinFailureRecoveryThrottle(policy: .default)
        #expect(throttle.admit(host: "api.example.com", at: .seconds(100)) == .admitted)
        #expect(throttle.admit(host: "api.example.com", at: .seconds(100)) == .throttled(retryAfter: .seconds(60)))
        #expect(throttle.admit(host: "api.example.com", at: .seconds(159)) == .throttled(retryAfter: .seconds(1)))
        #expect(throttle.admit(host: "api.example.com", at: .milliseconds(159_999)) == .throttled(retryAfter: .milliseconds(1)))
        // A throttled attempt does not restart the interval: the next one is allowed exactly one interval after
        // the admitted one.
        #expect(throttle.admit(host: "api.example.com", at: .seconds(160)) == .admitted)
        #expect(throttle.admit(host: "api.example.com", at: .seconds(161)) == .throttled(retryAfter: .seconds(59)))
    }

    @Test func theGlobalCapBoundsForcedUpdatesForAllHostsTogether() {
        var throttle = PinFailureRecoveryThrottle(policy: .default)
        #expect(throttle.admit(host: "a.example.com", at: .seconds(0)) == .admitted)
        #expect(throttle.admit(host: "b.example.com", at: .seconds(1)) == .admitted)
        #expect(throttle.admit(host: "c.example.com", at: .seconds(2)) == .admitted)
        // A fourth host within the minute waits for the oldest forced update to leave the window.
        #expect(throttle.admit(host: "d.example.com", at: .seconds(3)) == .throttled(retryAfter: .seconds(57)))
        #expect(throttle.admit(host: "d.example.com", at: .seconds(60)) == .admitted)
        #expect(throttle.admit(host: "e.example.com", at: .seconds(60)) == .throttled(retryAfter: .seconds(1)))
        #expect(throttle.admit(host: "e.example.com", at: .seconds(61)) == .admitted)
    }

    /// An attacker who makes every connection of an app to ever new host names fail gets at most the cap per
    /// interval, and the throttle's memory stays that small.
    @Test func aFloodOfFailingHostsGetsAtMostTheCapPerIntervalAndIsForgotten() throws {
        let policy = try PinFailureRecoveryPolicy(perHostInterval: .seconds(10), maximumForcedUpdatesPerInterval: 2)
        var throttle = PinFailureRecoveryThrottle(policy: policy)
        var admittedAt: [Duration] = []
        for step in 0..<2000 {
            let now = Duration.milliseconds(step * 50)
            if throttle.admit(host: "host\(step).example.com", at: now) == .admitted { admittedAt.append(now) }
            #expect(throttle.hostsInInterval(at: now) <= 2)
        }
        // 100 s of failures: two per 10 s window, never more in any window.
        #expect(admittedAt.count == 20)
        for (index, time) in admittedAt.enumerated() where index >= 2 {
            #expect(time - admittedAt[index - 2] >= .seconds(10))
        }
    }

    @Test func aHostThatJoinedAnUpdateWaitsItsIntervalButUsesNoGlobalSlot() {
        var throttle = PinFailureRecoveryThrottle(policy: .default)
        #expect(throttle.admit(host: "a.example.com", at: .seconds(0)) == .admitted)
        throttle.noteJoined(host: "b.example.com", at: .seconds(0))
        #expect(throttle.admit(host: "b.example.com", at: .seconds(5)) == .throttled(retryAfter: .seconds(55)))
        #expect(throttle.admit(host: "c.example.com", at: .seconds(5)) == .admitted)
        #expect(throttle.admit(host: "d.example.com", at: .seconds(5)) == .admitted)
    }

    @Test func thePolicyRefusesBoundsThatWouldLetFailuresHammerTheServer() throws {
        #expect(throws: InputError.self) { try PinFailureRecoveryPolicy(perHostInterval: .seconds(9)) }
        #expect(throws: InputError.self) { try PinFailureRecoveryPolicy(perHostInterval: .zero) }
        #expect(throws: InputError.self) { try PinFailureRecoveryPolicy(maximumForcedUpdatesPerInterval: 0) }
        #expect(throws: InputError.self) { try PinFailureRecoveryPolicy(maximumForcedUpdatesPerInterval: 11) }
        let lowest = try PinFailureRecoveryPolicy(perHostInterval: .seconds(10), maximumForcedUpdatesPerInterval: 1)
        #expect(lowest.perHostInterval == .seconds(10))
        #expect(PinFailureRecoveryPolicy.default == (try PinFailureRecoveryPolicy()))
        #expect(PinFailureRecoveryPolicy.default.perHostInterval == .seconds(60))
        #expect(PinFailureRecoveryPolicy.default.maximumForcedUpdatesPerInterval == 3)
    }

    @Test func refusedChainsAreRememberedForABoundedNumberOfHosts() {
        let refusals = RecentPinRefusals()
        for index in 0..<100 { refusals.record(host: "host\(index).example.com", chain: [[UInt8(index)]]) }
        #expect(refusals.count == RecentPinRefusals.capacity)
        #expect(refusals.chain(for: "host0.example.com") == nil)
        #expect(refusals.chain(for: "HOST99.example.com.") == [[99]])
    }
}

/// `PinsetUpdater.recoverAfterPinFailure(host:)` against a fake trust server: what is fetched, when, and what the
/// caller is told.
@Suite("Pin failure recovery")
struct PinFailureRecoveryTests {
    struct Setup {
        let fixture: ClientFixture
        let clock = ManualMonotonicClock()
        let updater: PinsetUpdater
        let authority: TestPKI.Issued
        let genuine: TestPKI.Issued
        let renewed: TestPKI.Issued
        let intercepting: TestPKI.Issued

        init() async throws {
            fixture = try ClientFixture()
            updater = PinsetUpdater(configuration: fixture.configuration, fetcher: fixture.fetcher, now: fixture.clock.now, monotonicNow: clock.now)
            authority = try TestPKI.certificateAuthority()
            genuine = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: authority)
            renewed = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: authority)
            intercepting = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: authority)
            try await fixture.update(updater, with: try pinning([genuine], version: 1))
        }

        func pinning(_ keys: [TestPKI.Issued], version: Int64, signedAgo: Int64 = 5) throws -> BundlePayload {
            try fixture.payload(version: version, hosts: [try ClientFixture.host("api.example.com", keys: keys)], signedAgo: signedAgo)
        }

        /// Evaluates `presented` for api.example.com as a TLS callback does.
        func evaluate(_ presented: TestPKI.Issued) -> PinEvaluation {
            updater.evaluator.evaluate(host: "api.example.com", chain: [presented.certificateDER, authority.certificateDER])
        }

        var fetches: Int { fixture.fetcher.requestedURLs.count }

        func remove() { fixture.directory.remove() }
    }

    @Test func aRotatedKeyIsRecoveredByOneForcedUpdateAndTheRetryPasses() async throws {
        let s = try await Setup()
        defer { s.remove() }
        guard case .pinMismatch = s.evaluate(s.renewed) else {
            Issue.record("the renewed key is not pinned yet")
            return
        }
        s.fixture.fetcher.serve(try s.fixture.signed(try s.pinning([s.renewed, s.genuine], version: 2)))
        let before = s.fetches
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .retryWithNewPins(version: 2))
        #expect(s.fetches == before + 1)
        guard case .pinnedMatch = s.evaluate(s.renewed) else {
            Issue.record("the retry must pass: \(s.evaluate(s.renewed))")
            return
        }
        // The refusal was settled: a later call has nothing to recover and fetches nothing.
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .noRecordedFailure)
        #expect(s.fetches == before + 1)
    }

    @Test func aManInTheMiddleForcesOneUpdatePerIntervalAndNeverPasses() async throws {
        let s = try await Setup()
        defer { s.remove() }
        // The trust server keeps serving the genuine pins; a newer bundle that pins another key changes nothing.
        s.fixture.fetcher.serve(try s.fixture.signed(try s.pinning([s.genuine, s.renewed], version: 2)))
        let before = s.fetches
        #expect(!s.evaluate(s.intercepting).isTrusted)
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .pinsStillRefuse)
        #expect(s.fetches == before + 1)
        #expect(await s.updater.currentPinSet?.version == 2)

        s.clock.advance(by: .seconds(10))
        #expect(!s.evaluate(s.intercepting).isTrusted)
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .throttled(retryAfter: .seconds(50)))
        #expect(s.fetches == before + 1)

        s.clock.advance(by: .seconds(50))
        #expect(!s.evaluate(s.intercepting).isTrusted)
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .pinsStillRefuse)
        #expect(s.fetches == before + 2)
        #expect(!s.evaluate(s.intercepting).isTrusted)
    }

    @Test func theGlobalCapHoldsAcrossHosts() async throws {
        let s = try await Setup()
        defer { s.remove() }
        let hosts = (1...4).map { "api\($0).example.com" }
        let wildcard = try ClientFixture.host("example.com", keys: [s.genuine], includeSubdomains: true)
        try await s.fixture.update(s.updater, with: try s.fixture.payload(version: 2, hosts: [wildcard]))
        let before = s.fetches
        var outcomes: [PinFailureRecovery] = []
        for host in hosts {
            #expect(!s.updater.evaluator.evaluate(host: host, chain: [s.intercepting.certificateDER]).isTrusted)
            outcomes.append(await s.updater.recoverAfterPinFailure(host: host))
        }
        #expect(outcomes == [.pinsStillRefuse, .pinsStillRefuse, .pinsStillRefuse, .throttled(retryAfter: .seconds(60))])
        #expect(s.fetches == before + 3)
    }

    @Test func aForcedUpdateServingAnOlderBundleKeepsTheHeldPins() async throws {
        let s = try await Setup()
        defer { s.remove() }
        try await s.fixture.update(s.updater, with: try s.pinning([s.genuine], version: 5))
        // A genuinely signed but older bundle that pinned the intercepting key: a rollback.
        s.fixture.fetcher.serve(try s.fixture.signed(try s.pinning([s.intercepting], version: 4)))
        #expect(!s.evaluate(s.intercepting).isTrusted)
        let outcome = await s.updater.recoverAfterPinFailure(host: "api.example.com")
        #expect(outcome == .updateFailed(PinUpdateError(.rollback, "")), "\(outcome)")
        #expect(await s.updater.currentPinSet?.version == 5)
        #expect(!s.evaluate(s.intercepting).isTrusted)
    }

    @Test func aForcedUpdateServingAnUnverifiableBundleKeepsTheHeldPins() async throws {
        let s = try await Setup()
        defer { s.remove() }
        let stranger = try TestPKI.signingIdentity(commonName: "Another Trust Server")
        s.fixture.fetcher.serve(try s.fixture.signed(try s.pinning([s.intercepting], version: 9), by: stranger))
        #expect(!s.evaluate(s.intercepting).isTrusted)
        let outcome = await s.updater.recoverAfterPinFailure(host: "api.example.com")
        guard case .updateFailed(let error) = outcome, case .signature = error.code else {
            Issue.record("a bundle signed by another trust server must be refused: \(outcome)")
            return
        }
        #expect(await s.updater.currentPinSet?.version == 1)
        #expect(!s.evaluate(s.intercepting).isTrusted)
    }

    @Test func aForcedUpdateServingAStaleReplayKeepsTheHeldPins() async throws {
        let s = try await Setup()
        defer { s.remove() }
        // Newer and genuinely signed, but signed 20 minutes ago: a replay, refused as for any update.
        s.fixture.fetcher.serve(try s.fixture.signed(try s.pinning([s.intercepting], version: 2, signedAgo: 1200)))
        #expect(!s.evaluate(s.intercepting).isTrusted)
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .updateFailed(PinUpdateError(.stale, "")))
        #expect(await s.updater.currentPinSet?.version == 1)
    }

    @Test func aHostWithoutARecordedRefusalFetchesNothing() async throws {
        let s = try await Setup()
        defer { s.remove() }
        let before = s.fetches
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .noRecordedFailure)
        guard case .pinnedMatch = s.evaluate(s.genuine) else { return }
        #expect(await s.updater.recoverAfterPinFailure(host: "api.example.com") == .noRecordedFailure)
        #expect(s.fetches == before)
    }

    /// Two hosts renewed together fail at the same time: the second failure waits for the update the first one
    /// forced instead of fetching again, and both may retry.
    @Test func aFailureWhileAForcedUpdateRunsWaitsForItInsteadOfFetching() async throws {
        let s = try await Setup()
        defer { s.remove() }
        let wildcard = try ClientFixture.host("example.com", keys: [s.genuine], includeSubdomains: true)
        try await s.fixture.update(s.updater, with: try s.fixture.payload(version: 2, hosts: [wildcard]))
        let gated = GatedFetcher(body: try s.fixture.signed(try s.fixture.payload(version: 3, hosts: [
            try ClientFixture.host("example.com", keys: [s.renewed, s.genuine], includeSubdomains: true),
        ])))
        let updater = PinsetUpdater(configuration: s.fixture.configuration, fetcher: gated, now: s.fixture.clock.now, monotonicNow: s.clock.now)
        #expect(await updater.loadStoredPins().isLoaded)
        for host in ["a.example.com", "b.example.com"] {
            #expect(!updater.evaluator.evaluate(host: host, chain: [s.renewed.certificateDER]).isTrusted)
        }
        let first = Task { await updater.recoverAfterPinFailure(host: "a.example.com") }
        #expect(try await eventually(within: 10) { gated.started == 1 })
        let second = Task { await updater.recoverAfterPinFailure(host: "b.example.com") }
        // The second host is in its interval once it joined (or was admitted, which would fetch a second time).
        var joined = false
        for _ in 0..<500 where !joined {
            joined = await updater.recoveryThrottle.hostsInInterval(at: s.clock.now()) == 2
            if !joined { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(joined)
        gated.open()
        #expect(await first.value == .retryWithNewPins(version: 3))
        #expect(await second.value == .retryWithNewPins(version: 3))
        #expect(gated.started == 1)
    }

    @Test func pinsUpdatedSinceTheFailureAllowTheRetryWithoutAFetch() async throws {
        let s = try await Setup()
        defer { s.remove() }
        #expect(!s.evaluate(s.renewed).isTrusted)
        try await s.fixture.update(s.updater, with: try s.pinning([s.renewed, s.genuine], version: 2))
        let before = s.fetches
        #expect(await s.updater.recoverAfterPinFailure(host: "API.example.com") == .retryWithNewPins(version: 2))
        #expect(s.fetches == before)
    }
}

/// A trust server whose answers wait until the test opens the gate, counting the fetches started.
final class GatedFetcher: BundleFetcher, @unchecked Sendable {
    // `@unchecked`: the counters are only touched under `lock`.
    private let lock = NSLock()
    private let body: [UInt8]
    private var isOpen = false
    private var fetches = 0

    init(body: [UInt8]) { self.body = body }

    var started: Int { lock.withLock { fetches } }

    func open() { lock.withLock { isOpen = true } }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        lock.withLock { fetches += 1 }
        for _ in 0..<1000 where !lock.withLock({ isOpen }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        return FetchedBundle(statusCode: 200, body: body)
    }
}

extension PinsetUpdater.StoredState {
    var isLoaded: Bool {
        if case .loaded = self { return true }
        return false
    }
}
