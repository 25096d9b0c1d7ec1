import Foundation
import PinsetCore
import Testing

/// `hashes[].report-only-until`: absent, a bundle keeps the bytes legacy GCX clients and older Pinset clients
/// read; present, it is an integer in the host's entry, digested with the pins (it is content), and strict.
struct ReportOnlyPayloadTests {
    static let hashes = #"[{"hostname":"api.example.com","port":"8443","fp":["\#(String(repeating: "ab", count: 32))"],"pk":[],"pin-sha256":["\#(Base64.encode(Array(repeating: UInt8(1), count: 32)))"],"include-subdomains":true}]"#
    static let withoutWindow = #"{"customer":"acme","timestamp":1700000000,"hashes":\#(hashes),"format":1,"version":3,"expires":1700086400}"#

    @Test func theWindowIsWrittenInTheHostsEntryAndDigestedOnlyWhenSet() throws {
        var payload = try BundlePayloadTests.samplePayload()
        #expect(String(decoding: payload.encoded(), as: UTF8.self) == Self.withoutWindow)
        let digestWithout = payload.contentDigest

        payload.hosts[0].reportOnlyUntil = 1_700_050_000
        let withWindow = Self.withoutWindow.replacingOccurrences(of: #""include-subdomains":true}"#, with: #""include-subdomains":true,"report-only-until":1700050000}"#)
        #expect(String(decoding: payload.encoded(), as: UTF8.self) == withWindow)
        #expect(payload.contentDigest != digestWithout, "same version, other window: a client must see other content")
        let decoded = try BundlePayload.decode(payload.encoded())
        #expect(decoded == payload)
        #expect(decoded.hosts[0].reportOnlyUntil == 1_700_050_000)
        #expect(try BundlePayload.decode(Array(Self.withoutWindow.utf8)).hosts[0].reportOnlyUntil == nil)
    }

    @Test(arguments: [
        (#""report-only-until":null"#, "null"),
        (#""report-only-until":"1700050000""#, "wrong type"),
        (#""report-only-until":1700050000.0"#, "integer"),
        (#""report-only-until":-1"#, "negative"),
    ])
    func aMalformedWindowIsRefusedWithItsPath(_ member: String, _ why: String) throws {
        let text = Self.withoutWindow.replacingOccurrences(of: #""include-subdomains":true}"#, with: #""include-subdomains":true,\#(member)}"#)
        let error = try #require(throws: PayloadError.self) { try BundlePayload.decode(Array(text.utf8)) }
        #expect(error.description.contains("report-only-until"), "\(why): \(error)")
    }

    @Test func theBoundIsRelativeToTheSigningTime() throws {
        var host = try BundlePayloadTests.samplePayload().hosts[0]
        host.reportOnlyUntil = 1_700_000_000 + BundleBounds.maximumReportOnlySeconds
        #expect(BundleBounds.reportOnlyProblem(hosts: [host], signedAt: 1_700_000_000) == nil)
        #expect(BundleBounds.reportOnlyProblem(hosts: [host], signedAt: 1_699_999_999)?.contains("api.example.com") == true)
        host.reportOnlyUntil = Int64.max
        #expect(BundleBounds.reportOnlyProblem(hosts: [host], signedAt: -10) != nil)
        #expect(host.isReportOnly(at: 1_700_000_000))
        host.reportOnlyUntil = 1_700_000_000
        #expect(!host.isReportOnly(at: 1_700_000_000), "a window is over at its end")
    }
}
