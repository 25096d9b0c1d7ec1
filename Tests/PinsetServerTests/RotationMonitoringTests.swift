import Foundation
import Logging
import PinsetCore
import PinsetLiveCheck
@testable import PinsetServer
import PinsetStore
import Testing

/// What the monitor says about key rotation: a host that switched to a pre-pinned key, and a certificate close to
/// its expiry with no key pinned ahead.
struct RotationMonitoringTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let old = try! PinMaterial.pin(base64SPKIHash: Data(repeating: 1, count: 32).base64EncodedString(), label: "old")
    static let next = try! PinMaterial.pin(base64SPKIHash: Data(repeating: 2, count: 32).base64EncodedString(), label: "next")
    static let following = try! PinMaterial.pin(base64SPKIHash: Data(repeating: 3, count: 32).base64EncodedString(), label: "following")

    static func leaf(_ pin: Pin, daysLeft: Double) -> LiveCertificate {
        LiveCertificate(position: 0, spkiSHA256: pin.spkiSHA256!, certificateSHA256: SHA256Fingerprint(of: [9]),
                        subject: "CN=api.example.com", notAfter: now.addingTimeInterval(daysLeft * 86_400))
    }

    static func job(_ pins: [Pin], next: [Pin]) throws -> HostCheckJob {
        HostCheckJob(customer: try CustomerName("acme"), host: HostPins(hostname: try Hostname("api.example.com"), pins: pins),
                     nextKeys: Set(next.compactMap(\.spkiSHA256)))
    }

    @Test func aHostServingItsNextKeyIsLiveKeyIsNext() throws {
        // Pinned by key alone, the next key is a "spare": without the mark the host would read as fallen back to it.
        let state = HostChecker.result(of: try Self.job([Self.old, Self.next], next: [Self.next]), against: [Self.leaf(Self.next, daysLeft: 47)],
                                       now: Self.now, expiryWarningDays: 30).state
        #expect(state == .liveKeyIsNext)
        let unmarked = HostChecker.result(of: try Self.job([Self.old, Self.next], next: []), against: [Self.leaf(Self.next, daysLeft: 47)],
                                          now: Self.now, expiryWarningDays: 30).state
        #expect(unmarked == .matches)
    }

    @Test func aLeafCloseToExpiryWithoutANextKeyIsFlagged() throws {
        let expiring = HostChecker.result(of: try Self.job([Self.old, Self.following], next: []), against: [Self.leaf(Self.old, daysLeft: 10)],
                                          now: Self.now, expiryWarningDays: 30)
        #expect(expiring.state == .expiringWithoutNextKey)
        #expect(!expiring.state.isFailing)
        let prepared = HostChecker.result(of: try Self.job([Self.old, Self.following], next: [Self.following]), against: [Self.leaf(Self.old, daysLeft: 10)],
                                          now: Self.now, expiryWarningDays: 30)
        #expect(prepared.state == .matches)
        let far = HostChecker.result(of: try Self.job([Self.old, Self.following], next: []), against: [Self.leaf(Self.old, daysLeft: 40)],
                                     now: Self.now, expiryWarningDays: 30)
        #expect(far.state == .matches)
    }

    @Test func theNewStatesAreCountedInMetricsAndStatus() {
        #expect(HostCheckState.allCases.contains(.liveKeyIsNext) && HostCheckState.allCases.contains(.expiringWithoutNextKey))
        #expect(HostCheckState.expiringWithoutNextKey.severity < HostCheckState.liveKeyIsNext.severity)
        #expect(HostCheckState.liveKeyIsNext.severity < HostCheckState.matches.severity)
    }
}

/// A sink that keeps what it is given.
final class RecordingUptakeSink: UptakeSharingSink, @unchecked Sendable {
    private let lock = NSLock()
    private var snapshots: [UptakeSnapshot] = []
    private var removed: [String] = []

    func replaceUptakeSnapshot(_ snapshot: UptakeSnapshot) throws { lock.withLock { snapshots.append(snapshot) } }
    func removeUptakeSnapshot(instance: String) throws { lock.withLock { removed.append(instance) } }
    var written: [UptakeSnapshot] { lock.withLock { snapshots } }
    var removedInstances: [String] { lock.withLock { removed } }
}

struct UptakeSharingTests {
    @Test func aSnapshotCarriesTheWindowTheSettingsAndEveryKindOfFetch() throws {
        let counter = UptakeCounter(windowSeconds: 120)
        let acme = try CustomerName("acme")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        counter.record(.version(5), customer: acme, servedVersion: 6, at: now)
        counter.record(.version(6), customer: acme, servedVersion: 6, at: now)
        counter.record(.unknown, customer: acme, servedVersion: 6, at: now)
        // Older than the two-minute window: left out.
        counter.record(.version(4), customer: acme, servedVersion: 6, at: now.addingTimeInterval(-180))
        let sink = RecordingUptakeSink()
        let times = ServingTimes(resignIntervalSeconds: 1, freshnessWindowSeconds: 60, maxAgeSeconds: 0)
        let sharing = UptakeSharing(counter: counter, sink: sink, servingTimes: times, interval: .seconds(2), logger: Logger(label: "test"), now: { now })
        sharing.shareNow()
        let snapshot = try #require(sink.written.last)
        #expect(snapshot.windowSeconds == 120)
        #expect(snapshot.servingTimes == times)
        #expect(snapshot.fetches[acme] == [5: 1, 6: 1, UptakeSnapshot.unknownVersion: 1])
        #expect(snapshot.validUntil == now.addingTimeInterval(6))
        sharing.start()
        sharing.stop()
        #expect(sink.removedInstances == [sharing.instance])
    }
}
