import Foundation
import PinsetCore
import PinsetTestSupport
import Testing

@Suite struct PinFailureReportTests {
    private static let leaf: TestPKI.Issued = {
        // Test setup: a generated CA and leaf; failure here is a broken test environment.
        let ca = try! TestPKI.certificateAuthority()
        return try! TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: ca)
    }()

    @Test func aTrustKitReportParsesWithEveryMember() throws {
        let report = try PinFailureReport.parse(TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM))
        #expect(report.hostname == "api.example.com")
        #expect(report.port == 443)
        #expect(report.validationResult == 1)
        #expect(report.appVersion == "2.4.1")
        #expect(report.trustkitVersion == "3.0.3")
        #expect(report.pinsetVersion == nil)
        #expect(report.knownPinsExpirationDate == nil)
        #expect(try report.leafSPKISHA256() == Self.leaf.spkiSHA256)
    }

    @Test func anOlderTrustKitReportWithoutPlatformMembersParses() throws {
        var object = TrustKitReportFixture.object(leafPEM: Self.leaf.certificatePEM)
        for name in ["app-platform", "app-platform-version", "trustkit-version", "enforce-pinning", "known-pins-expiration-date"] {
            object[name] = nil
        }
        let report = try PinFailureReport.parse(TrustKitReportFixture.json(object))
        #expect(report.appPlatform == nil)
        #expect(report.enforcePinning == nil)
    }

    /// TrustKit-Android writes the device's local time followed by a literal `Z`: read, and kept as sent, not
    /// taken for UTC.
    @Test func aTrustKitAndroidReportKeepsItsLocalTimeAsSent() throws {
        var failure = TrustKitWireReport.Failure(validatedChain: [Self.leaf.certificateDER])
        failure.date = Date(timeIntervalSince1970: 1_795_000_000)
        let report = try PinFailureReport.parse(TrustKitWireReport.android(failure, timeZone: TimeZone(secondsFromGMT: -5 * 3600)!))
        #expect(report.dateTime == "2026-11-18T06:06:40Z")
        #expect(report.appPlatform == "ANDROID")
        #expect(try report.leafSPKISHA256() == Self.leaf.spkiSHA256)
    }

    @Test func pinsetsOwnReportRoundTripsThroughJSON() throws {
        let report = PinFailureReport(
            appBundleID: "com.example.app", appVersion: "1.0", appVendorID: "install-1", hostname: "api.example.com", port: 8443,
            notedHostname: "example.com", includeSubdomains: true, validatedCertificateChain: [Self.leaf.certificatePEM],
            knownPins: ["pin-sha256=\"\(Self.leaf.spkiSHA256.base64)\""], validationResult: 1, pinsetVersion: 1_795_446_098_875
        )
        #expect(try PinFailureReport.parse(report.json()) == report)
    }

    /// Each case replaces one member with a JSON text.
    @Test(arguments: [
        ("port", #""443""#, "port"),
        ("port", "70000", "port"),
        ("port", "443.5", "port"),
        ("validation-result", "true", "validation-result"),
        ("include-subdomains", "1", "include-subdomains"),
        ("hostname", #""not a host""#, "hostname"),
        ("known-pins", #"["sha256/abc"]"#, "known-pins[0]"),
        ("known-pins", #""pin-sha256=\"x\"""#, "known-pins"),
        ("validated-certificate-chain", #"["not a certificate"]"#, "validated-certificate-chain[0]"),
        ("app-version", "\"\(String(repeating: "9", count: 65))\"", "app-version"),
        ("app-version", #""1.0\u0000""#, "app-version"),
        ("app-bundle-id", #""com.example\u001b[2J""#, "app-bundle-id"),
        ("pinset-version", "0", "pinset-version"),
        ("pinset-version", "9007199254740993", "pinset-version"),
        ("hostname", "null", "hostname"),
        ("validated-certificate-chain", #"[{"nested": [[[]]]}]"#, "validated-certificate-chain[0]"),
    ])
    func schemaViolationsNameTheMember(name: String, valueJSON: String, path: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(valueJSON.utf8), options: .fragmentsAllowed)
        let bytes = TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM, overrides: [name: value])
        do {
            let report = try PinFailureReport.parse(bytes)
            _ = try report.leafSPKISHA256()
            Issue.record("\(name) = \(valueJSON) was accepted")
        } catch {
            #expect(error.path == path)
        }
    }

    @Test func membersThePinsetDoesNotReadAreIgnoredButStillChecked() throws {
        let chain = [Self.leaf.certificatePEM, Self.leaf.certificatePEM]
        let report = try PinFailureReport.parse(TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM, overrides: [
            "served-certificate-chain": chain, "x-future": ["nested": [1, 2.5, ["deep": true]]],
        ]))
        #expect(report.hostname == "api.example.com")
        // Duplicate members and invalid UTF-8 are refused inside an unknown member too.
        let valid = String(decoding: TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM), as: UTF8.self)
        let duplicate = valid.replacingOccurrences(of: "{\"app-bundle-id\"", with: #"{"x":{"a":1,"a":2},"app-bundle-id""#)
        #expect(duplicate != valid)
        #expect(throws: PayloadError.self) { try PinFailureReport.parse(Array(duplicate.utf8)) }
        var invalid = Array(valid.replacingOccurrences(of: "{\"app-bundle-id\"", with: #"{"x":"?","app-bundle-id""#).utf8)
        invalid[invalid.firstIndex(of: UInt8(ascii: "?"))!] = 0xFF
        #expect(throws: PayloadError.self) { try PinFailureReport.parse(invalid) }
    }

    @Test func pemWithAnyBase64LineLengthIsAccepted() throws {
        let der = Self.leaf.certificateDER
        let base64 = Data(der).base64EncodedString()
        func pem(_ length: Int, _ separator: String, trailer: String) -> String {
            "-----BEGIN CERTIFICATE-----\n" + TrustKitWireReport.lines(of: base64, length: length).joined(separator: separator)
                + "\n-----END CERTIFICATE-----" + trailer
        }
        let expected = Self.leaf.spkiSHA256
        for variant in [pem(64, "\r\n", trailer: ""), pem(76, "\n", trailer: "\n"), pem(10_000, "\n", trailer: "\r\n"), pem(7, "\n", trailer: "")] {
            let report = try PinFailureReport.parse(TrustKitReportFixture.json(leafPEM: variant))
            #expect(try report.leafSPKISHA256() == expected, "\(variant)")
        }
        for broken in [pem(64, "\n ", trailer: ""), pem(64, "\n", trailer: "x"), pem(64, "\n", trailer: "").replacingOccurrences(of: "CERTIFICATE", with: "KEY"),
                       "-----BEGIN CERTIFICATE-----\n" + base64.dropLast(2) + "\n-----END CERTIFICATE-----"] {
            let report = try PinFailureReport.parse(TrustKitReportFixture.json(leafPEM: broken))
            #expect(throws: PayloadError.self) { try report.leafSPKISHA256() }
        }
    }

    @Test func hostileEncodingsAreRefused() {
        let valid = TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM)
        let deep = Array(String(repeating: "[", count: 40).utf8) + Array(String(repeating: "]", count: 40).utf8)
        var invalidUTF8 = valid
        invalidUTF8.insert(contentsOf: [0xC3, 0x28], at: valid.firstIndex(of: UInt8(ascii: "\""))! + 1)
        let duplicate = Array("{\"port\":443,\"port\":444}".utf8)
        for input in [deep, invalidUTF8, duplicate, [], Array("[]".utf8), Array("{} {}".utf8)] {
            #expect(throws: PayloadError.self) { try PinFailureReport.parse(input) }
        }
    }
}
