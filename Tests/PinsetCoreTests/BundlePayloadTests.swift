import Foundation
import PinsetCore
import Testing

struct BundlePayloadTests {
    static func samplePayload() throws -> BundlePayload {
        let spki: [UInt8] = Array(repeating: 7, count: 10)
        let host = PinnedHost(
            hostname: try Hostname("api.example.com"),
            port: 8443,
            includeSubdomains: true,
            spkiSHA256: [try SHA256Fingerprint(bytes: Array(repeating: 1, count: 32))],
            certificateSHA256: [try SHA256Fingerprint(bytes: Array(repeating: 0xab, count: 32))],
            subjectPublicKeyInfos: []
        )
        _ = spki
        return BundlePayload(customer: try CustomerName("acme"), timestamp: 1_700_000_000, expires: 1_700_086_400, version: 3, hosts: [host])
    }

    @Test func encodesLegacyKeysWithExactTypes() throws {
        let payload = try Self.samplePayload()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload.encoded())) as? [String: Any])
        #expect(object["customer"] as? String == "acme")
        #expect((object["timestamp"] as? NSNumber)?.int64Value == 1_700_000_000)
        let hashes = try #require(object["hashes"] as? [[String: Any]])
        #expect(hashes.count == 1)
        #expect(hashes[0]["hostname"] as? String == "api.example.com")
        #expect(hashes[0]["port"] as? String == "8443")
        #expect(hashes[0]["fp"] as? [String] == [String(repeating: "ab", count: 32)])
        #expect(hashes[0]["pk"] as? [String] == [])
        #expect(hashes[0]["pin-sha256"] as? [String] == [Base64.encode(Array(repeating: UInt8(1), count: 32))])
        #expect(hashes[0]["include-subdomains"] as? Bool == true)
        #expect((object["version"] as? NSNumber)?.int64Value == 3)
        #expect((object["expires"] as? NSNumber)?.int64Value == 1_700_086_400)
    }

    @Test func encodingIsDeterministicAndRoundTrips() throws {
        let payload = try Self.samplePayload()
        #expect(payload.encoded() == payload.encoded())
        let decoded = try BundlePayload.decode(payload.encoded())
        #expect(decoded == payload)
        #expect(decoded.contentDigest == payload.contentDigest)
    }

    /// Bundles without a floor keep their bytes and digests: the key is written, and digested, only when set.
    @Test func theRevocationFloorIsWrittenAndDigestedOnlyWhenSet() throws {
        var payload = try Self.samplePayload()
        let hashes = #"[{"hostname":"api.example.com","port":"8443","fp":["\#(String(repeating: "ab", count: 32))"],"pk":[],"pin-sha256":["\#(Base64.encode(Array(repeating: UInt8(1), count: 32)))"],"include-subdomains":true}]"#
        let withoutFloor = #"{"customer":"acme","timestamp":1700000000,"hashes":\#(hashes),"format":1,"version":3,"expires":1700086400}"#
        #expect(String(decoding: payload.encoded(), as: UTF8.self) == withoutFloor)
        #expect(payload.contentDigest == SHA256Fingerprint(of: Array(#"{"customer":"acme","version":3,"hashes":\#(hashes)}"#.utf8)))

        payload.signersNotBefore = 1_699_990_000
        #expect(String(decoding: payload.encoded(), as: UTF8.self) == String(withoutFloor.dropLast()) + #","signers-not-before":1699990000}"#)
        #expect(payload.contentDigest == SHA256Fingerprint(of: Array(#"{"customer":"acme","version":3,"hashes":\#(hashes),"signers-not-before":1699990000}"#.utf8)))
        let decoded = try BundlePayload.decode(payload.encoded())
        #expect(decoded.signersNotBefore == 1_699_990_000)
        #expect(decoded == payload)
        #expect(try BundlePayload.decode(Array(withoutFloor.utf8)).signersNotBefore == nil)
    }

    @Test func contentDigestIgnoresSigningTimeButNotPins() throws {
        var payload = try Self.samplePayload()
        let original = payload.contentDigest
        payload.timestamp += 300
        payload.expires += 300
        #expect(payload.contentDigest == original)
        payload.hosts[0].includeSubdomains = false
        #expect(payload.contentDigest != original)
    }

    @Test(arguments: [
        (#"{"customer":"acme","timestamp":"1","hashes":[],"format":1,"version":1,"expires":2}"#, "timestamp"),
        (#"{"customer":"acme","timestamp":1,"hashes":[{"hostname":"a.com","port":443,"fp":[],"pk":[],"pin-sha256":[],"include-subdomains":false}],"format":1,"version":1,"expires":2}"#, "hashes[0].port"),
        (#"{"customer":"acme","timestamp":1,"format":1,"version":1,"expires":2}"#, "hashes"),
        (#"{"customer":"acme","timestamp":1,"hashes":[{"hostname":"a.com","port":"443","fp":[],"pk":[],"pin-sha256":["AAAA"],"include-subdomains":false}],"format":1,"version":1,"expires":2}"#, "hashes[0].pin-sha256[0]"),
        (#"{"customer":"acme","timestamp":1,"hashes":[{"hostname":"a.com","port":"443","fp":["XYZ"],"pk":[],"pin-sha256":[],"include-subdomains":false}],"format":1,"version":1,"expires":2}"#, "hashes[0].fp[0]"),
        (#"{"customer":"../etc","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2}"#, "customer"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":1}"#, "expires"),
        (#"{"customer":"acme","timestamp":1.0,"hashes":[],"format":1,"version":1,"expires":2}"#, "timestamp"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1e0,"expires":2}"#, "version"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2E2}"#, "expires"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":10e-1,"version":1,"expires":2}"#, "format"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2,"customer":"evil"}"#, ""),
        (#"{"customer":"acme","timestamp":1,"hashes":[{"hostname":"a.com","hostname":"b.com","port":"443","fp":[],"pk":[],"pin-sha256":[],"include-subdomains":false}],"format":1,"version":1,"expires":2}"#, "hashes[0]"),
        ("\u{FEFF}" + #"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2}"#, ""),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2,"signers-not-before":null}"#, "signers-not-before"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2,"signers-not-before":"1"}"#, "signers-not-before"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2,"signers-not-before":1.0}"#, "signers-not-before"),
        (#"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2,"signers-not-before":-1}"#, "signers-not-before"),
        (#"[1,2,3]"#, ""),
        ("not json", ""),
    ])
    func rejectsWrongTypesWithThePath(json: String, path: String) throws {
        #expect {
            _ = try BundlePayload.decode(Array(json.utf8))
        } throws: { error in
            (error as? PayloadError)?.path == path
        }
    }

    @Test func unknownKeysMayHoldAnyValidJSON() throws {
        let json = #"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2,"later":{"ratio":0.5,"big":1e300}}"#
        #expect(try BundlePayload.decode(Array(json.utf8)).version == 1)
    }

    @Test func rejectsUTF16Payloads() throws {
        let json = #"{"customer":"acme","timestamp":1,"hashes":[],"format":1,"version":1,"expires":2}"#
        #expect(throws: PayloadError.self) { try BundlePayload.decode([0xFF, 0xFE] + json.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }) }
        #expect(throws: PayloadError.self) { try BundlePayload.decode(json.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }) }
    }

    @Test func rejectsDuplicateHostnames() throws {
        let entry = #"{"hostname":"a.com","port":"443","fp":[],"pk":[],"pin-sha256":[],"include-subdomains":false}"#
        let json = #"{"customer":"acme","timestamp":1,"hashes":["# + entry + "," + entry + #"],"format":1,"version":1,"expires":2}"#
        #expect(throws: PayloadError.self) { try BundlePayload.decode(Array(json.utf8)) }
    }

    @Test func hostsWithoutPinsAreNeverEncoded() throws {
        let pinned = try Self.samplePayload().hosts[0]
        let pinless = PinnedHost(
            hostname: try Hostname("login.api.example.com"), port: 443, includeSubdomains: false,
            spkiSHA256: [], certificateSHA256: [], subjectPublicKeyInfos: []
        )
        #expect(pinned.hasPins && !pinless.hasPins)
        let payload = BundlePayload(customer: try CustomerName("acme"), timestamp: 1, expires: 2, version: 1, hosts: [pinned, pinless])
        #expect(payload.publishedHosts == [pinned])
        #expect(try BundlePayload.decode(payload.encoded()).hosts == [pinned])
        #expect(BundlePayload.encodedHosts([pinless, pinned]) == BundlePayload.encodedHosts([pinned]))

        let pinSet = PinSet(customer: try CustomerName("acme"), version: 1, hosts: [
            HostPins(hostname: try Hostname("example.com"), includeSubdomains: true, pins: [Pin(spkiSHA256: pinned.spkiSHA256[0], source: PinSource(kind: .hash))]),
            HostPins(hostname: try Hostname("login.example.com"), pins: []),
        ])
        #expect(BundlePayload.publishedHosts(of: pinSet).map(\.hostname) == [try Hostname("example.com")])
        #expect(BundlePayload(pinSet: pinSet, timestamp: 1, expires: 2).hosts.count == 1)
    }
}
