import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

/// The bounds a genuine bundle stays within (lifetime, version lead) at their edges, and the device clock: set
/// back, it cannot make what was refused acceptable again; off by days, the refusal says so, with an estimate.
@Suite("Bundle bounds and clock sanity")
struct BoundsAndClockTests {
    @Test func theLifetimeBoundAcceptsItsLimitAndRefusesOneSecondMore() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        let limit = BundleBounds.defaultMaximumLifetimeSeconds
        var atLimit = try f.payload(version: 1)
        atLimit.expires = atLimit.timestamp + limit
        #expect(try await f.update(updater, with: atLimit).version == 1)
        var beyond = try f.payload(version: 2)
        beyond.expires = beyond.timestamp + limit + 1
        #expect(try await #require(throws: PinUpdateError.self) { try await f.update(updater, with: beyond) }.code == .lifetimeTooLong)
        #expect(await updater.currentPinSet?.version == 1)
    }

    @Test func aConfiguredLifetimeBoundApplies() async throws {
        var f = try ClientFixture()
        defer { f.directory.remove() }
        f.configuration.maximumBundleLifetime = .seconds(3600)
        let updater = f.makeUpdater()
        #expect(try await #require(throws: PinUpdateError.self) { try await f.update(updater, with: try f.payload(version: 1, expiresIn: 3600)) }.code == .lifetimeTooLong)
        #expect(try await f.update(updater, with: try f.payload(version: 1, expiresIn: 3600 - 5)).version == 1)
    }

    @Test func theVersionBoundAcceptsItsLimitAndRefusesOneMore() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        var beyond = try f.payload(version: 0)
        beyond.version = BundleBounds.highestVersion(signedAt: beyond.timestamp) + 1
        let error = try await #require(throws: PinUpdateError.self) { try await f.update(updater, with: beyond) }
        #expect(error.code == .versionAheadOfSigningTime, "\(error)")
        var atLimit = try f.payload(version: 0)
        atLimit.version = BundleBounds.highestVersion(signedAt: atLimit.timestamp)
        #expect(try await f.update(updater, with: atLimit).version == atLimit.version)
        // The rule in milliseconds: a day ahead of the signing second.
        #expect(BundleBounds.highestVersion(signedAt: 1_795_317_613) == 1_795_317_613_000 + 86_400_000)
        #expect(BundleBounds.highestVersion(signedAt: Int64.max / 10) == Int64.max)
    }

    /// A device clock set back a year after a bundle was accepted: the leaked key of a signer certificate that
    /// expired before then signs a bundle "now" by that clock, with a higher version. At the device's time it
    /// passes every check (fresh, signer valid); the client checks at the latest signing time it holds instead.
    @Test func aClockSetBackCannotReviveAnExpiredSigner() async throws {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let root = try SigningRoot.generate(keyType: .p256, commonName: "Clock Root", validityDays: 3650, now: now.addingTimeInterval(-3 * 365 * 86_400))
        func issue(at time: Date, days: Int) throws -> SigningIdentity {
            let request = try SignerRequest.generate(keyType: .p256, commonName: "signer \(time.timeIntervalSince1970)")
            let certificate = try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: days, allowLongValidity: true), now: time)
            return try SigningIdentity(privateKey: request.privateKey, certificate: certificate, intermediates: [root.certificate])
        }
        // Valid for the year before last month: expired when the held bundle was signed.
        let expired = try issue(at: now.addingTimeInterval(-400 * 86_400), days: 365)
        let current = try issue(at: now.addingTimeInterval(-86_400), days: 365)
        let f = try ClientFixture(anchors: [root.certificate], identity: current)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        let held = try f.payload(version: 5)
        #expect(try await f.update(updater, with: held).version == 5)

        f.clock.advance(by: -365 * 86_400)
        #expect(await updater.latestSignedAt == Date(timeIntervalSince1970: TimeInterval(held.timestamp)))
        let revived = try f.payload(version: 6)
        f.fetcher.serve(try f.signed(revived, by: expired))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .signature(.untrustedSigner))
        // A genuine bundle that expired by the latest signing time held is refused as expired.
        var lapsed = try f.payload(version: 7, signedAgo: 0)
        lapsed.expires = held.timestamp
        lapsed.timestamp = lapsed.expires - 600
        f.fetcher.serve(try f.signed(lapsed))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .expired)
        #expect(await updater.currentPinSet?.version == 5)
    }

    /// The held floor is kept whatever the clock says: after the clock is set back a year, a revoked signer valid
    /// at that time is still refused.
    @Test func aClockSetBackKeepsTheFloor() async throws {
        let signers = try RevocationFloorTests.Signers()
        let f = try ClientFixture(anchors: [signers.root.certificate], identity: signers.newer)
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        var held = try f.payload(version: 5)
        held.signersNotBefore = signers.newerNotBefore
        #expect(try await f.update(updater, with: held).version == 5)
        f.clock.advance(by: -3 * 86_400)
        f.fetcher.serve(try f.signed(try f.payload(version: 6), by: signers.older))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .revokedSigner)
        #expect(await updater.signersNotBefore == Date(timeIntervalSince1970: TimeInterval(signers.newerNotBefore)))
    }

    @Test func aClockThreeDaysAheadGetsTheTypedSkewErrorWithAnEstimate() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        let chain = [[UInt8](repeating: 1, count: 16)]
        let host = "api.example.com"
        try await f.update(updater, with: try f.payload(version: 1))
        let verdictBefore = updater.evaluator.evaluate(host: host, chain: chain)

        let serverTime = f.clock.now()
        f.clock.advance(by: 3 * 86_400)
        f.fetcher.serve(try f.signed(try f.payload(version: 2, signedAgo: 3 * 86_400 + 30)), serverDate: serverTime)
        let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
        #expect(error.code == .clockSkew, "\(error)")
        let estimate = try #require(error.estimatedClockSkew)
        #expect(abs(estimate.components.seconds - 3 * 86_400) <= 1, "\(estimate)")
        #expect(error.reason.contains("3 days ahead"), "\(error.reason)")
        #expect(await updater.currentPinSet?.version == 1)
        // The estimate changes nothing about pinned TLS peers.
        #expect(updater.evaluator.evaluate(host: host, chain: chain) == verdictBefore)

        // Without a server Date the refusal keeps its own code: a replay cannot be told from a wrong clock.
        f.fetcher.serve(try f.signed(try f.payload(version: 2, signedAgo: 3 * 86_400 + 30)))
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .stale)
        // A Date that agrees with the device clock: a replayed old bundle, not a clock problem.
        f.fetcher.serve(try f.signed(try f.payload(version: 2, signedAgo: 3 * 86_400 + 30)), serverDate: f.clock.now())
        #expect(try await #require(throws: PinUpdateError.self) { try await updater.update() }.code == .stale)
    }

    @Test func aClockSetBackAYearGetsTheSkewErrorForFreshBundles() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try await f.update(updater, with: try f.payload(version: 1))
        f.clock.advance(by: 3600)
        let serverTime = f.clock.now()
        let fresh = try f.payload(version: 2, signedAgo: 5)
        f.clock.advance(by: -365 * 86_400 - 3600)
        f.fetcher.serve(try f.signed(fresh), serverDate: serverTime)
        let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
        #expect(error.code == .clockSkew, "\(error)")
        #expect(try #require(error.estimatedClockSkew).components.seconds < -364 * 86_400)
        #expect(error.reason.contains("behind"), "\(error.reason)")
    }

    /// What a network attacker gets from a bundle signed with a key of their own whose timestamps sit at the ends of
    /// the integers, served with a `Date` before 1970 or far ahead: the refusal for the signature, never a crash
    /// while the client weighs whether a wrong device clock explains it.
    @Test func aForgedBundleWithExtremeTimesAndDatesIsRefusedWithoutACrash() async throws {
        let f = try ClientFixture()
        defer { f.directory.remove() }
        let updater = f.makeUpdater()
        try await f.update(updater, with: try f.payload(version: 1))
        let attacker = try TestPKI.signingIdentity()
        let extremes = [
            BundlePayload(customer: f.customer, timestamp: .max - 1, expires: .max, version: 2, hosts: [try ClientFixture.host("api.example.com", pins: ["evil"])]),
            BundlePayload(customer: f.customer, timestamp: 0, expires: .max, version: 2, hosts: [try ClientFixture.host("api.example.com", pins: ["evil"])]),
        ]
        let dates = [Date(timeIntervalSince1970: -60), Date(timeIntervalSince1970: -62_135_596_800), Date(timeIntervalSince1970: 253_402_300_799)]
        for payload in extremes {
            for date in dates {
                f.fetcher.serve(try f.signed(payload, by: attacker), serverDate: date)
                let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
                #expect(error.code == .signature(.untrustedSigner), "\(payload.timestamp) at \(date): \(error)")
            }
        }
        #expect(await updater.currentPinSet?.version == 1)
    }
}
