import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Next keys, the version that first carries each pin, completing a rotation, and the uptake figures server
/// instances share: on both backends.
struct RotationStoreTests {
    let acme = try! Sample.customer("acme")
    let api = try! Sample.host("api.example.com")

    func live(_ pin: Pin, position: Int = 0) -> LiveCertificate {
        LiveCertificate(position: position, spkiSHA256: pin.spkiSHA256!, certificateSHA256: SHA256Fingerprint(of: pin.spkiSHA256!.bytes + [1]),
                        subject: "CN=api.example.com", notAfter: StoreFixture.start.addingTimeInterval(47 * 86_400))
    }

    func setUp(_ fixture: StoreFixture, pins: [Pin]) throws {
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addPins(pins, to: api, of: acme, actor: Sample.actor)
    }

    @Test(arguments: StoreBackend.allCases)
    func everyPinRecordsTheFirstVersionThatCarriesIt(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture, pins: [try Sample.hashPin(1)])
        let first = try #require(try fixture.store.pinSet(for: acme)).version
        fixture.clock.advance(by: 60)
        try fixture.store.addPins([try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor)
        let second = try #require(try fixture.store.pinSet(for: acme)).version
        let pins = try #require(try fixture.store.rotationHosts(of: acme).first).pins
        #expect(pins.first { $0.pin == (try! Sample.hashPin(1)) }?.publishedVersion == first)
        #expect(pins.first { $0.pin == (try! Sample.hashPin(2)) }?.publishedVersion == second)
        #expect(pins.first { $0.pin == (try! Sample.hashPin(2)) }?.addedAt == StoreFixture.start.addingTimeInterval(60))
        #expect(pins.allSatisfy { !$0.isNext })
    }

    @Test(arguments: StoreBackend.allCases)
    func aNewNextKeyIsPublishedWhileMarkingAPinnedKeyLeavesTheVersion(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture, pins: [try Sample.hashPin(1), try Sample.hashPin(2)])
        let before = try #require(try fixture.store.pinSet(for: acme)).version

        let added = try fixture.store.markNextKeys([try Sample.hashPin(3)], for: api, of: acme, reason: "acme: next key", actor: Sample.actor)
        #expect(added.added == [try Sample.hashPin(3).spkiSHA256!])
        #expect(added.version > before, "a new key changes the bundle")
        #expect(try fixture.store.pinSet(for: acme)?.hosts.first?.pins.count == 3)

        let marked = try fixture.store.markNextKeys([try Sample.hashPin(2)], for: api, of: acme, reason: "backup becomes next", actor: Sample.actor)
        #expect(marked.marked == [try Sample.hashPin(2).spkiSHA256!])
        #expect(marked.version == added.version, "a mark is not in the bundle")
        #expect(try fixture.store.pinSet(for: acme)?.version == added.version)

        let next = try #require(try fixture.store.rotationHosts(of: acme).first).nextPins.map(\.pin)
        #expect(Set(next) == [try Sample.hashPin(2), try Sample.hashPin(3)])
        #expect(try fixture.store.nextKeys()[acme]?[api] == [try Sample.hashPin(2).spkiSHA256!, try Sample.hashPin(3).spkiSHA256!])
        let audit = try fixture.store.auditLog(customer: acme, limit: 2)
        #expect(audit.allSatisfy { $0.action == .nextKeysAdded })
        #expect(audit.first?.details.contains("reason: backup becomes next") == true)

        let auditCount = try fixture.store.auditLog().count
        let again = try fixture.store.markNextKeys([try Sample.hashPin(3)], for: api, of: acme, reason: "again", actor: Sample.actor)
        #expect(again.alreadyNext == [try Sample.hashPin(3).spkiSHA256!] && again.added.isEmpty && again.marked.isEmpty)
        #expect(again.version == added.version)
        #expect(try fixture.store.auditLog().count == auditCount, "a repeated request records nothing")
    }

    @Test(arguments: StoreBackend.allCases)
    func aNextKeyNeedsAKeyAndAReason(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture, pins: [try Sample.hashPin(1), try Sample.hashPin(2)])
        let certificateOnly = try PinMaterial.pin(certificateSHA256Hex: String(repeating: "ab", count: 32))
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.markNextKeys([certificateOnly], for: api, of: acme, reason: "r", actor: Sample.actor)
        }
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.markNextKeys([try Sample.hashPin(3)], for: api, of: acme, reason: "  ", actor: Sample.actor)
        }
        #expect(try fixture.store.pinSet(for: acme)?.hosts.first?.pins.count == 2)
    }

    @Test(arguments: StoreBackend.allCases)
    func completingPromotesTheLiveNextKeyAndRetiresTheRest(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let old = try Sample.hashPin(1), spare = try Sample.hashPin(2), renewed = try Sample.hashPin(3), following = try Sample.hashPin(4)
        try setUp(fixture, pins: [old, spare])
        try fixture.store.markNextKeys([renewed], for: api, of: acme, reason: "next", actor: Sample.actor)
        try fixture.store.markNextKeys([following], for: api, of: acme, reason: "the one after", actor: Sample.actor)
        let before = try #require(try fixture.store.pinSet(for: acme)).version

        let result = try fixture.store.completeRotation(of: api, of: acme, live: [live(renewed)], keep: [spare.spkiSHA256!], reason: "renewed", actor: Sample.actor)
        #expect(result.promoted == [renewed.spkiSHA256!])
        #expect(result.retired == [old])
        #expect(result.version > before)
        let host = try #require(try fixture.store.rotationHosts(of: acme).first)
        #expect(Set(host.pins.map(\.pin)) == [spare, renewed, following])
        #expect(host.nextPins.map(\.pin) == [following])
        #expect(try fixture.store.auditLog(customer: acme, limit: 1).first?.action == .rotationCompleted)

        let again = try fixture.store.completeRotation(of: api, of: acme, live: [live(renewed)], keep: [spare.spkiSHA256!], reason: "renewed", actor: Sample.actor)
        #expect(again.changedNothing)
        #expect(again.version == result.version)
    }

    @Test(arguments: StoreBackend.allCases)
    func completingIsRefusedWhenNothingMatchesOrNoBackupWouldBeLeft(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let old = try Sample.hashPin(1), renewed = try Sample.hashPin(3)
        try setUp(fixture, pins: [old])
        try fixture.store.markNextKeys([renewed], for: api, of: acme, reason: "next", actor: Sample.actor)
        let version = try #require(try fixture.store.pinSet(for: acme)).version
        let audit = try fixture.store.auditLog().count

        #expect(throws: StoreError(.pinNotFound, "")) {
            try fixture.store.completeRotation(of: api, of: acme, live: [live(try Sample.hashPin(9))], reason: "wrong host", actor: Sample.actor)
        }
        // The pins changed since the chain was fetched (here: the caller saw only `old`): nothing is retired unseen.
        #expect(throws: StoreError(.changedSinceCheck, "")) {
            try fixture.store.completeRotation(of: api, of: acme, live: [live(renewed)], keep: [old.spkiSHA256!], expected: [old], reason: "renewed", actor: Sample.actor)
        }
        // Retiring `old` would leave only the live key: the following renewal would lock apps out.
        #expect(throws: StoreError(.lastPinOfHost, "")) {
            try fixture.store.completeRotation(of: api, of: acme, live: [live(renewed)], reason: "renewed", actor: Sample.actor)
        }
        #expect(try fixture.store.pinSet(for: acme)?.version == version)
        #expect(try fixture.store.auditLog().count == audit)
        #expect(try fixture.store.rotationHosts(of: acme).first?.nextPins.map(\.pin) == [renewed])
    }

    func snapshot(_ instance: String, at time: Date, valid seconds: TimeInterval = 180, resign: Int64 = 300, fetches: [CustomerName: [Int64: Int]]) -> UptakeSnapshot {
        UptakeSnapshot(instance: instance, windowSeconds: 3600,
                       servingTimes: ServingTimes(resignIntervalSeconds: resign, freshnessWindowSeconds: 600, maxAgeSeconds: 300),
                       takenAt: time, validUntil: time.addingTimeInterval(seconds), fetches: fetches)
    }

    @Test(arguments: StoreBackend.allCases)
    func instancesShareUptakeThatAddsUpAndAgesOut(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture, pins: [try Sample.hashPin(1)])
        let now = StoreFixture.start
        let changes = try fixture.store.changeCounter()
        try fixture.store.replaceUptakeSnapshot(snapshot("a", at: now, fetches: [acme: [5: 10, 0: 3, -1: 1], try CustomerName("ghost"): [5: 1]]))
        try fixture.store.replaceUptakeSnapshot(snapshot("b", at: now, resign: 900, fetches: [acme: [5: 2, 6: 4]]))
        var shared = try fixture.store.sharedUptake(of: acme, at: now.addingTimeInterval(60))
        #expect(shared.fetches == [5: 12, 6: 4, 0: 3, -1: 1])
        #expect(shared.instances.map(\.instance) == ["a", "b"])
        #expect(ServingTimes.longest(shared.instances.map(\.servingTimes))?.resignIntervalSeconds == 900)

        // A new snapshot replaces the instance's figures; a stopped instance's figures count no more.
        try fixture.store.replaceUptakeSnapshot(snapshot("a", at: now.addingTimeInterval(60), fetches: [acme: [6: 7]]))
        try fixture.store.removeUptakeSnapshot(instance: "b")
        shared = try fixture.store.sharedUptake(of: acme, at: now.addingTimeInterval(90))
        #expect(shared.fetches == [6: 7])
        // Figures past their validity are ignored, as from an instance that died.
        shared = try fixture.store.sharedUptake(of: acme, at: now.addingTimeInterval(60 + 181))
        #expect(shared.instances.isEmpty && shared.fetches.isEmpty)
        #expect(try fixture.store.changeCounter() == changes, "sharing figures re-signs nothing")
    }
}
