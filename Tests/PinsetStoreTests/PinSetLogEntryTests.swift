import Foundation
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

/// The log entry a client recomputes from a bundle it verified is, byte for byte, the one the store logged.
@Suite struct PinSetLogEntryTests {
    static let identity = Result { try TestPKI.signingIdentity() }

    /// Pin sets with what the content hash must see through: include-subdomains, a host without pins (never
    /// published), mixed-case spellings, certificate-only and key-only pins, several ports, none at all.
    static func pinSets() throws -> [PinSet] {
        let pins = try Sample.certificateChainPins()
        let publicKey = try Sample.publicKeyPin()
        let certificateOnly = Pin(spkiSHA256: nil, certificateSHA256: try SHA256Fingerprint(bytes: [UInt8](repeating: 3, count: 32)), source: PinSource(kind: .hash))
        return [
            PinSet(customer: try Sample.customer("empty"), version: 1, hosts: []),
            PinSet(customer: try Sample.customer("acme"), version: 1_800_000_000_001, hosts: [
                HostPins(hostname: try Sample.host("example.com"), includeSubdomains: true, pins: [try Sample.hashPin(1), try Sample.hashPin(2)]),
                HostPins(hostname: try Sample.host("api.example.com"), port: 8443, pins: pins + [publicKey]),
                HostPins(hostname: try Sample.host("new.example.com"), pins: []),
            ]),
            PinSet(customer: try Sample.customer("Mixed.Case"), version: 42, hosts: [
                HostPins(hostname: try Sample.host("CDN.Example.NET"), includeSubdomains: true, pins: [certificateOnly, try Sample.hashPin(9)]),
                HostPins(hostname: try Sample.host("b.example.net"), pins: [try Sample.hashPin(8), try Sample.hashPin(7)]),
                HostPins(hostname: try Sample.host("a.example.net"), pins: [try Sample.hashPin(5)]),
            ], signer: .customerOwn, signersNotBefore: 1_700_000_000),
            PinSet(customer: try Sample.customer("only-pinless"), version: 7, hosts: [
                HostPins(hostname: try Sample.host("pending.example.org"), pins: []),
            ]),
        ]
    }

    /// A bundle signed by the server, verified and decoded as a client does, yields the store's entry bytes.
    @Test func aVerifiedPayloadGivesTheSameEntryAsThePinSet() async throws {
        let identity = try Self.identity.get()
        for pinSet in try Self.pinSets() {
            let payload = BundlePayload(pinSet: pinSet, timestamp: 1_800_000_000, expires: 1_800_086_400)
            let bundle = try BundleSigner(identity: identity).sign(payload)
            let verified = try await SignatureVerifier.verify(bundle, trustAnchors: [identity.certificate], at: Date(timeIntervalSince1970: 1_800_000_100)).get()
            let decoded = try BundlePayload.decode(verified.content)

            let fromStore = try PinSetLogEntry(pinSet: pinSet)
            let fromClient = try PinSetLogEntry(payload: decoded)
            #expect(fromClient == fromStore, "\(pinSet.customer)")
            #expect(fromClient.encoded() == fromStore.encoded(), "\(pinSet.customer)")
            #expect(fromStore.contentSHA256 == SHA256Fingerprint(of: BundlePayload.encodedHosts(BundlePayload.publishedHosts(of: pinSet))))
        }
    }

    /// A host without pins is not published, so adding or removing one changes nothing a client can see, and the
    /// entry stays the same; a re-signing (new timestamps) gives the same entry too.
    @Test func onlyPublishedContentEntersTheHash() throws {
        let sets = try Self.pinSets()
        var withPinless = sets[1]
        withPinless.hosts.removeAll { $0.pins.isEmpty }
        #expect(try PinSetLogEntry(pinSet: withPinless) == PinSetLogEntry(pinSet: sets[1]))
        #expect(try PinSetLogEntry(pinSet: sets[3]).contentSHA256 == PinSetLogEntry(pinSet: sets[0]).contentSHA256)

        let early = BundlePayload(pinSet: sets[2], timestamp: 1, expires: 2)
        let late = BundlePayload(pinSet: sets[2], timestamp: 1_900_000_000, expires: 1_900_086_400)
        #expect(try PinSetLogEntry(payload: try BundlePayload.decode(early.encoded())) == PinSetLogEntry(payload: try BundlePayload.decode(late.encoded())))

        var includeSubdomainsOff = sets[1]
        includeSubdomainsOff.hosts[0].includeSubdomains = false
        #expect(try PinSetLogEntry(pinSet: includeSubdomainsOff).contentSHA256 != PinSetLogEntry(pinSet: sets[1]).contentSHA256)
    }

    @Test func theEncodingIsTheDocumentedText() throws {
        let entry = try PinSetLogEntry(
            customer: try Sample.customer("acme"), version: 1_800_000_000_000, contentSHA256: SHA256Fingerprint(of: Array("[]".utf8))
        )
        let text = """
            pinset-pin-set-log-entry v1
            customer acme
            version 1800000000000
            content-sha256 T1PNoYwrqgwDVLtfmj7L5e0Sq02OEbqHPC8RFhICuUU=

            """
        #expect(String(decoding: entry.encoded(), as: UTF8.self) == text)
        #expect(try PinSetLogEntry(encoded: entry.encoded()) == entry)
        #expect(entry.encoded().count <= PinSetLogEntry.maximumEncodedSize)
    }

    /// Every other spelling of an entry is refused, so one entry has one leaf hash.
    @Test func nonCanonicalOrForeignEncodingsAreRefused() throws {
        let entry = try PinSetLogEntry(customer: try Sample.customer("acme"), version: 5, contentSHA256: SHA256Fingerprint(of: [1]))
        let canonical = String(decoding: entry.encoded(), as: UTF8.self)
        let hash = entry.contentSHA256.base64
        let variants: [String] = [
            canonical.replacingOccurrences(of: "version 5", with: "version 05"),
            canonical.replacingOccurrences(of: "version 5", with: "version +5"),
            canonical.replacingOccurrences(of: "version 5", with: "version -5"),
            canonical.replacingOccurrences(of: "version 5", with: "version 00"),
            canonical.replacingOccurrences(of: "version 5", with: "version "),
            canonical.replacingOccurrences(of: "version 5", with: "version 5 "),
            canonical.replacingOccurrences(of: "version 5", with: "version 0x5"),
            canonical.replacingOccurrences(of: "version 5", with: "version 9223372036854775808"),
            canonical.replacingOccurrences(of: "version 5", with: "version 99999999999999999999"),
            canonical.replacingOccurrences(of: "customer acme", with: "customer  acme"),
            canonical.replacingOccurrences(of: "customer acme", with: "customer acme/x"),
            canonical.replacingOccurrences(of: hash, with: String(hash.dropLast())),
            canonical.replacingOccurrences(of: "v1", with: "v2"),
            canonical.replacingOccurrences(of: "\n", with: "\r\n"),
            String(canonical.dropLast()),
            canonical + "\n",
            canonical + "extra 1\n",
            "",
        ]
        for variant in variants {
            #expect(throws: InputError.self, "\(variant.debugDescription)") { try PinSetLogEntry(encoded: Array(variant.utf8)) }
        }
        // The bounds themselves are entries.
        for version: Int64 in [0, 9, 10, .max] {
            let bound = try PinSetLogEntry(customer: try Sample.customer("acme"), version: version, contentSHA256: SHA256Fingerprint(of: [1]))
            #expect(try PinSetLogEntry(encoded: bound.encoded()) == bound)
        }
        #expect(throws: InputError.self) {
            try PinSetLogEntry(customer: try Sample.customer("acme"), version: -1, contentSHA256: SHA256Fingerprint(of: [1]))
        }
    }
}
