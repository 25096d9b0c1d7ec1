import Foundation
import PinsetCore
import Testing

/// The legacy-usability rule: GCX clients match `fp` (a certificate's SHA-256) and RSA `pk` entries only.
struct PinLegacyClientsTests {
    /// DER SubjectPublicKeyInfo with rsaEncryption and a (tiny) RSAPublicKey: only the algorithm matters here.
    static let rsaSPKI: [UInt8] = [
        0x30, 0x1a, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
        0x03, 0x09, 0x00, 0x30, 0x06, 0x02, 0x01, 0x0b, 0x02, 0x01, 0x03,
    ]
    /// DER SubjectPublicKeyInfo with id-ecPublicKey on prime256v1.
    static let ecSPKI: [UInt8] = [
        0x30, 0x1a, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
        0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x03, 0x00, 0x04, 0x01,
    ]

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func pin(spki: [UInt8]? = nil, certificateHash: Bool = false, notAfter: Date? = nil) throws -> Pin {
        Pin(
            spkiSHA256: SHA256Fingerprint(of: spki ?? [1, 2, 3]),
            subjectPublicKeyInfo: spki,
            certificateSHA256: certificateHash ? try SHA256Fingerprint(bytes: Array(repeating: 0xab, count: 32)) : nil,
            source: PinSource(kind: .certificate),
            notAfter: notAfter
        )
    }

    @Test func eachPinFormHasItsLegacyUses() throws {
        #expect(try Self.pin().legacyUses == [])
        #expect(try Self.pin(spki: Self.ecSPKI).legacyUses == [])
        #expect(try Self.pin(spki: Self.rsaSPKI).legacyUses == [.rsaPublicKey])
        #expect(try Self.pin(spki: Self.ecSPKI, certificateHash: true).legacyUses == [.certificateHash])
        #expect(try Self.pin(spki: Self.rsaSPKI, certificateHash: true).legacyUses == [.certificateHash, .rsaPublicKey])
        // A pin that carries only a certificate hash is usable through `fp`.
        #expect(try Self.pin(certificateHash: true).isUsableByLegacyClients(at: Self.now))
        #expect(try Self.pin(spki: [0x30, 0x00]).legacyUses == [])
    }

    @Test func hostsCountTheirLegacyUsablePins() throws {
        var host = HostPins(hostname: try Hostname("api.example.com"), pins: [try Self.pin(), try Self.pin(spki: Self.ecSPKI)])
        #expect(!host.lacksBackupPin)
        #expect(host.lacksLegacyBackupPin(at: Self.now))
        host.pins = [try Self.pin(spki: Self.rsaSPKI), try Self.pin(spki: Self.ecSPKI, certificateHash: true)]
        #expect(host.legacyUsablePins(at: Self.now).count == 2)
        #expect(!host.lacksLegacyBackupPin(at: Self.now))
    }

    /// An expired certificate fails chain validation, so its `fp` matches nothing; an RSA key in `pk` may come
    /// back in a renewed certificate and stays usable.
    @Test func anExpiredCertificatesFingerprintIsNotUsable() throws {
        let expired = Self.now.addingTimeInterval(-1), valid = Self.now.addingTimeInterval(86_400)
        let ecCertificate = try Self.pin(spki: Self.ecSPKI, certificateHash: true, notAfter: expired)
        #expect(ecCertificate.legacyUses == [.certificateHash])
        #expect(ecCertificate.legacyUses(at: Self.now).isEmpty)
        #expect(!ecCertificate.isUsableByLegacyClients(at: Self.now))
        #expect(ecCertificate.isUsableByLegacyClients(at: expired))
        let rsaCertificate = try Self.pin(spki: Self.rsaSPKI, certificateHash: true, notAfter: expired)
        #expect(rsaCertificate.legacyUses(at: Self.now) == [.rsaPublicKey])
        #expect(rsaCertificate.isUsableByLegacyClients(at: Self.now))

        let host = HostPins(hostname: try Hostname("api.example.com"), pins: [
            ecCertificate, try Self.pin(spki: [9], certificateHash: false), try Self.pin(spki: Self.ecSPKI, certificateHash: true, notAfter: valid),
        ])
        #expect(host.legacyUsablePins(at: Self.now).count == 1)
        #expect(host.lacksLegacyBackupPin(at: Self.now))
        #expect(!host.lacksLegacyBackupPin(at: expired))
    }

    /// Legacy clients compare the published `hostname` exactly, so the given case is what the bundle carries;
    /// Pinset compares ignoring case, and so does the content digest.
    @Test func hostNamesKeepTheirSpellingButCompareIgnoringCase() throws {
        let mixed = try Hostname("API.Example.com.")
        #expect(mixed.rawValue == "api.example.com")
        #expect(mixed.spelling == "API.Example.com")
        #expect(mixed.hasMixedCase)
        #expect(mixed == (try Hostname("api.example.com")))
        #expect(Set([mixed, try Hostname("api.EXAMPLE.com")]).count == 1)

        let host = PinnedHost(hostname: mixed, port: 443, includeSubdomains: false, spkiSHA256: [SHA256Fingerprint(of: [1])],
                              certificateSHA256: [], subjectPublicKeyInfos: [])
        let payload = BundlePayload(customer: try CustomerName("acme"), timestamp: 1_700_000_000, expires: 1_700_086_400, version: 1, hosts: [host])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload.encoded())) as? [String: Any])
        #expect((object["hashes"] as? [[String: Any]])?.first?["hostname"] as? String == "API.Example.com")
        let decoded = try BundlePayload.decode(payload.encoded())
        #expect(decoded.hosts.first?.hostname.spelling == "API.Example.com")
        #expect(decoded.encoded() == payload.encoded())

        var lower = payload
        lower.hosts = [PinnedHost(hostname: try Hostname("api.example.com"), port: 443, includeSubdomains: false,
                                  spkiSHA256: [SHA256Fingerprint(of: [1])], certificateSHA256: [], subjectPublicKeyInfos: [])]
        #expect(lower.encoded() != payload.encoded())
        #expect(lower.contentDigest == payload.contentDigest)
    }
}
