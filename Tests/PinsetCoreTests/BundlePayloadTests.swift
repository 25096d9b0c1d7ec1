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

    @Test func rejectsDuplicateHostnames() throws {
        let entry = #"{"hostname":"a.com","port":"443","fp":[],"pk":[],"pin-sha256":[],"include-subdomains":false}"#
        let json = #"{"customer":"acme","timestamp":1,"hashes":["# + entry + "," + entry + #"],"format":1,"version":1,"expires":2}"#
        #expect(throws: PayloadError.self) { try BundlePayload.decode(Array(json.utf8)) }
    }
}
