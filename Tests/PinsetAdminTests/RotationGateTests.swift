import Foundation
import PinsetAdmin
import PinsetCore
import PinsetStore
import Testing

/// The rotation gate against crafted hosts and uptake figures: the time rule, the share rule, and what a renewal
/// with a key that was never pre-pinned is told.
struct RotationGateTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let times = ServingTimes(resignIntervalSeconds: 300, freshnessWindowSeconds: 600, maxAgeSeconds: 300)
    static let live = try! PinMaterial.pin(base64SPKIHash: Data(repeating: 1, count: 32).base64EncodedString())
    static let next = try! PinMaterial.pin(base64SPKIHash: Data(repeating: 2, count: 32).base64EncodedString())

    static func host(nextAddedSecondsAgo: TimeInterval, publishedVersion: Int64 = 100) throws -> RotationHost {
        RotationHost(customer: try CustomerName("acme"), customerVersion: publishedVersion + 10, hostname: try Hostname("api.example.com"), port: 443, pins: [
            RotationPin(pin: live, isNext: false, addedAt: now.addingTimeInterval(-86_400 * 40), publishedVersion: 10),
            RotationPin(pin: next, isNext: true, addedAt: now.addingTimeInterval(-nextAddedSecondsAgo), publishedVersion: publishedVersion),
        ])
    }

    static func uptake(_ fetches: [Int64: Int], instances: Int = 1) -> SharedUptake {
        SharedUptake(instances: (0..<instances).map {
            SharedUptake.Instance(instance: "i\($0)", windowSeconds: 3600, servingTimes: times, takenAt: now)
        }, fetches: fetches)
    }

    @Test func aKeyPublishedForLessThanResignPlusFreshnessPlusMaxAgeIsNotYetSafe() throws {
        let gate = RotationGate(minimumShare: 0.9)
        let early = gate.judge(try Self.host(nextAddedSecondsAgo: 1199), uptake: Self.uptake([100: 50]), now: Self.now)
        #expect(early.verdict == .notYet)
        #expect(early.candidates.first?.blockers == [.tooRecent(until: Self.now.addingTimeInterval(1), seconds: 1)])
        let onTime = gate.judge(try Self.host(nextAddedSecondsAgo: 1200), uptake: Self.uptake([100: 50]), now: Self.now)
        #expect(onTime.verdict == .safe)
        #expect(onTime.servingTimes?.longestAcceptanceOfOlderBundle == 1200)
    }

    @Test func theShareCountsOnlyVersionsCarryingTheKeyAmongFetchesThatReportedOne() throws {
        let gate = RotationGate(minimumShare: 0.9)
        let host = try Self.host(nextAddedSecondsAgo: 86_400)
        // 89 of 100 reporting fetches hold version 100 or later; unknown fetches are left out, "other" counts against.
        let below = gate.judge(host, uptake: Self.uptake([99: 10, 100: 60, 101: 29, UptakeSnapshot.otherVersion: 1, UptakeSnapshot.unknownVersion: 500]), now: Self.now)
        #expect(below.verdict == .notYet)
        #expect(below.candidates.first?.fetchesHoldingKey == 89)
        #expect(below.candidates.first?.fetchesReportingVersion == 100)
        #expect(below.candidates.first?.fetchesWithoutVersion == 500)
        #expect(below.candidates.first?.blockers == [.shareBelowMinimum(share: 0.89, minimum: 0.9)])
        let above = gate.judge(host, uptake: Self.uptake([99: 10, 100: 61, 101: 29, UptakeSnapshot.unknownVersion: 500]), now: Self.now)
        #expect(above.verdict == .safe)
        #expect(above.candidates.first?.share == 0.9)
    }

    @Test func versionsNeverServedCountAgainstTheKey() throws {
        // The customer is at version 100: a claim of 5,000 was invented (a client cannot hold an unserved version).
        let invented = RotationGate(minimumShare: 0.9).judge(try Self.host(nextAddedSecondsAgo: 86_400), uptake: Self.uptake([100: 10, 5_000: 90]), now: Self.now)
        #expect(invented.verdict == .notYet)
        #expect(invented.candidates.first?.fetchesHoldingKey == 10)
        #expect(invented.candidates.first?.fetchesReportingVersion == 100)
    }

    @Test func withoutServerFiguresOrReportedFetchesNothingIsSafe() throws {
        let host = try Self.host(nextAddedSecondsAgo: 86_400)
        let noServers = RotationGate().judge(host, uptake: SharedUptake(instances: [], fetches: [:]), now: Self.now)
        #expect(noServers.verdict == .notYet)
        #expect(noServers.candidates.first?.blockers == [.noServerFigures])
        let quiet = RotationGate().judge(host, uptake: Self.uptake([UptakeSnapshot.unknownVersion: 40]), now: Self.now)
        #expect(quiet.candidates.first?.blockers == [.noReportedFetches])
        // A share of 0 turns the uptake rule off, never the time rule.
        #expect(RotationGate(minimumShare: 0).judge(host, uptake: Self.uptake([:]), now: Self.now).verdict == .safe)
        #expect(RotationGate(minimumShare: 0).judge(try Self.host(nextAddedSecondsAgo: 10), uptake: Self.uptake([:]), now: Self.now).verdict == .notYet)
    }

    @Test func aKeyThatIsNotANextKeyOfTheHostHasNoVerdictButNoNextKey() throws {
        let host = try Self.host(nextAddedSecondsAgo: 86_400)
        let never = try SHA256Fingerprint(bytes: Array(repeating: 9, count: 32))
        let unknown = RotationGate().judge(host, uptake: Self.uptake([100: 1]), key: never, now: Self.now)
        #expect(unknown.verdict == .noNextKey)
        #expect(unknown.keyNote?.contains("not pinned") == true)
        let liveKey = RotationGate().judge(host, uptake: Self.uptake([100: 1]), key: Self.live.spkiSHA256, now: Self.now)
        #expect(liveKey.verdict == .noNextKey)
        #expect(liveKey.keyNote?.contains("not as a next key") == true)
        #expect(RotationGate().judge(host, uptake: Self.uptake([100: 1]), key: Self.next.spkiSHA256, now: Self.now).verdict == .safe)
        var none = host
        none.pins = [none.pins[0]]
        #expect(RotationGate().judge(none, uptake: Self.uptake([100: 1]), now: Self.now).verdict == .noNextKey)
    }

    @Test func theLongestSettingsOfTheRunningInstancesApply() throws {
        let slow = ServingTimes(resignIntervalSeconds: 900, freshnessWindowSeconds: 600, maxAgeSeconds: 300)
        let uptake = SharedUptake(instances: [
            .init(instance: "a", windowSeconds: 3600, servingTimes: Self.times, takenAt: Self.now),
            .init(instance: "b", windowSeconds: 3600, servingTimes: slow, takenAt: Self.now),
        ], fetches: [100: 10])
        let readiness = RotationGate().judge(try Self.host(nextAddedSecondsAgo: 1500), uptake: uptake, now: Self.now)
        #expect(readiness.verdict == .notYet)
        #expect(readiness.servingTimes?.longestAcceptanceOfOlderBundle == 1800)
    }
}
