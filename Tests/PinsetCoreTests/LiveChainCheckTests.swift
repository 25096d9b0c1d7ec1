import Foundation
import PinsetCore
import PinsetTestSupport
import Testing

/// A pin set against a served chain: whether apps connect now, and whether they still would after the next
/// key change.
struct LiveChainCheckTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    struct Chain {
        let ca: TestPKI.Issued
        let leaf: TestPKI.Issued
        let live: [LiveCertificate]
    }

    static func chain(leafDaysLeft: Double = 90) throws -> Chain {
        let ca = try TestPKI.certificateAuthority(notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(86_400 * 3650))
        let leaf = try TestPKI.leaf(commonName: "api.example.test", dnsNames: ["api.example.test"], issuer: ca,
                                    notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(86_400 * leafDaysLeft))
        let live = try LiveCertificate.chain(fromDER: [leaf.certificateDER, ca.certificateDER])
        return Chain(ca: ca, leaf: leaf, live: live)
    }

    static func certificatePin(_ issued: TestPKI.Issued) throws -> Pin {
        try PinMaterial.pin(for: issued.certificate, source: PinSource(kind: .liveHost, detail: "api.example.test:443"))
    }

    static func spareKeyPin() throws -> Pin {
        let spare = try TestPKI.certificateAuthority(commonName: "spare")
        return try PinMaterial.pin(base64SPKIHash: spare.spkiSHA256.base64)
    }

    @Test func aLeafPinWithASpareMatchesAndHasABackup() throws {
        let chain = try Self.chain()
        let check = LiveChainCheck(pins: [try Self.certificatePin(chain.leaf), try Self.spareKeyPin()], chain: chain.live, now: Self.now)
        #expect(check.state == .matches)
        #expect(!check.fails)
        #expect(check.matches[0].certificates.map(\.position) == [0])
        #expect(check.matches[1].certificates.isEmpty)
        #expect(check.unmatchedPins.count == 1)
        #expect(!check.allPinsInLiveChain)
        #expect(check.warnings.isEmpty)
        #expect(check.leafDaysLeft == 90)
    }

    @Test func aSetThatMatchesNoLiveCertificateFails() throws {
        let chain = try Self.chain()
        let other = try Self.chain()
        let check = LiveChainCheck(pins: [try Self.certificatePin(other.leaf), try Self.spareKeyPin()], chain: chain.live, now: Self.now)
        #expect(check.state == .matchesNothing)
        #expect(check.fails)
        #expect(check.unmatchedPins.count == 2)
        #expect(LiveChainCheck(pins: [], chain: chain.live, now: Self.now).fails)
    }

    @Test func aCertificateHashPinMatchesOnlyThatCertificate() throws {
        let chain = try Self.chain()
        let byCertificate = try PinMaterial.pin(certificateSHA256Hex: chain.live[1].certificateSHA256.hex)
        let check = LiveChainCheck(pins: [byCertificate], chain: chain.live, now: Self.now)
        #expect(check.state == .matches)
        #expect(check.matches[0].certificates.map(\.position) == [1])
        // A new certificate for the same CA key is a different certificate: the hash no longer matches.
        let reissuedCA = try TestPKI.certificateAuthority(key: chain.ca.privateKey)
        let reissued = try LiveCertificate.chain(fromDER: [chain.leaf.certificateDER, reissuedCA.certificateDER])
        #expect(LiveChainCheck(pins: [byCertificate], chain: reissued, now: Self.now).fails)
        // A key pin of the same CA still matches the reissued certificate.
        #expect(!LiveChainCheck(pins: [try Self.certificatePin(chain.ca)], chain: reissued, now: Self.now).fails)
    }

    @Test func pinsAllInTheLiveChainAreFlaggedWithWhatWouldSurvive() throws {
        let chain = try Self.chain()
        let check = LiveChainCheck(pins: [try Self.certificatePin(chain.leaf), try Self.certificatePin(chain.ca)], chain: chain.live, now: Self.now)
        #expect(check.state == .matches)
        #expect(check.allPinsInLiveChain)
        #expect(check.pinsSurvivingLeafKeyChange.map(\.spkiSHA256) == [chain.ca.spkiSHA256])
        #expect(check.warnings.count == 1)
        #expect(check.warnings[0].contains(chain.ca.spkiSHA256.base64))

        let leafOnly = LiveChainCheck(pins: [try Self.certificatePin(chain.leaf)], chain: chain.live, now: Self.now)
        #expect(leafOnly.allPinsInLiveChain)
        #expect(leafOnly.pinsSurvivingLeafKeyChange.isEmpty)
        #expect(leafOnly.warnings[0].contains("a new leaf key would lock apps out"))
    }

    @Test func aHostServingItsSpareKeyMatchesOnlyTheBackup() throws {
        let old = try Self.chain()
        let spare = try Self.chain()
        let spareKey = try PinMaterial.pin(base64SPKIHash: spare.leaf.spkiSHA256.base64)
        let check = LiveChainCheck(pins: [try Self.certificatePin(old.leaf), spareKey], chain: spare.live, now: Self.now)
        #expect(check.state == .matchesOnlyBackup)
        #expect(!check.fails)
        #expect(check.warnings.contains { $0.contains("spare") })
        // Key-only pins throughout: nothing tells a spare from the primary, so this is a plain match.
        let keysOnly = LiveChainCheck(pins: [try PinMaterial.pin(base64SPKIHash: old.leaf.spkiSHA256.base64), spareKey], chain: spare.live, now: Self.now)
        #expect(keysOnly.state == .matches)
    }

    @Test func anExpiringLeafWhoseKeyIsTheOnlyPinIsFlagged() throws {
        let expiring = try Self.chain(leafDaysLeft: 10)
        let soleKey = LiveChainCheck(pins: [try Self.certificatePin(expiring.leaf)], chain: expiring.live, now: Self.now, expiryWarningDays: 30)
        #expect(soleKey.soleKeyExpiresSoon)
        #expect(soleKey.leafDaysLeft == 10)
        #expect(soleKey.warnings.contains { $0.contains("expires in 10 day(s)") })
        #expect(!LiveChainCheck(pins: [try Self.certificatePin(expiring.leaf)], chain: expiring.live, now: Self.now, expiryWarningDays: 7).soleKeyExpiresSoon)
        // A spare key outside the chain, or a pin of the CA, survives the renewal.
        #expect(!LiveChainCheck(pins: [try Self.certificatePin(expiring.leaf), try Self.spareKeyPin()], chain: expiring.live, now: Self.now).soleKeyExpiresSoon)
        #expect(!LiveChainCheck(pins: [try Self.certificatePin(expiring.leaf), try Self.certificatePin(expiring.ca)], chain: expiring.live, now: Self.now).soleKeyExpiresSoon)
    }

    @Test func aChainThatDoesNotParseIsRefusedWithItsPosition() throws {
        let chain = try Self.chain()
        #expect(throws: InputError.self) { try LiveCertificate.chain(fromDER: [chain.leaf.certificateDER, [0x30, 0x03, 0x01]]) }
        do {
            _ = try LiveCertificate.chain(fromDER: [chain.leaf.certificateDER, [0x30, 0x03, 0x01]])
        } catch {
            #expect(error.message.contains("Certificate 1"))
        }
    }
}
