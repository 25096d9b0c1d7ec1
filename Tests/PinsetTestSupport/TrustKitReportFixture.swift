import Foundation
import PinsetCore

/// Pin-failure reports shaped as TrustKit sends them (`TSKPinFailureReport`'s JSON, all members), built per test
/// from generated certificates.
public enum TrustKitReportFixture {
    /// The members TrustKit 1.6+ writes, with `overrides` replacing or adding members (`NSNull()` writes null).
    public static func object(
        leafPEM: String, hostname: String = "api.example.com", vendorID: String = "7D9A5E4C-0000-4000-8000-000000000001",
        appVersion: String = "2.4.1", validationResult: Int = 1, overrides: [String: Any] = [:]
    ) -> [String: Any] {
        var object: [String: Any] = [
            "app-bundle-id": "com.example.app",
            "app-version": appVersion,
            "app-platform": "IOS",
            "app-platform-version": "17.4.0",
            "app-vendor-id": vendorID,
            "trustkit-version": "3.0.3",
            "date-time": "2026-11-23T14:05:09Z",
            "hostname": hostname,
            "port": 443,
            "noted-hostname": hostname,
            "include-subdomains": false,
            "enforce-pinning": true,
            "validated-certificate-chain": [leafPEM],
            "known-pins": ["pin-sha256=\"\(String(repeating: "A", count: 43))=\"", "pin-sha256=\"\(String(repeating: "B", count: 42))A=\""],
            "validation-result": validationResult,
            "known-pins-expiration-date": NSNull(),
        ]
        for (key, value) in overrides { object[key] = value }
        return object
    }

    public static func json(_ object: [String: Any]) -> [UInt8] {
        [UInt8]((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    public static func json(leafPEM: String, hostname: String = "api.example.com", vendorID: String = "7D9A5E4C-0000-4000-8000-000000000001",
                            appVersion: String = "2.4.1", overrides: [String: Any] = [:]) -> [UInt8] {
        json(object(leafPEM: leafPEM, hostname: hostname, vendorID: vendorID, appVersion: appVersion, overrides: overrides))
    }
}

/// Pin-failure reports built the way each TrustKit builds and serializes them, byte for byte where the library
/// decides the bytes: TrustKit-Android 1.1.5 (`PinningFailureReport.toJson()` written with `org.json`, PEM made by
/// `BackgroundReporter.certificateToPem`), the shape of TrustKit-Android's `docs/sample_report.json`, and TrustKit
/// 3.0.0 for iOS (`TSKPinFailureReport.json` through `NSJSONSerialization`, PEM made by `reporting_utils.m`).
public enum TrustKitWireReport {
    /// What the failing connection gave the library.
    public struct Failure: Sendable {
        public var hostname = "api.example.com"
        public var notedHostname = "api.example.com"
        public var includeSubdomains = false
        public var enforcePinning = true
        /// DER certificates, leaf first.
        public var validatedChain: [[UInt8]]
        public var servedChain: [[UInt8]]
        public var pins: [String] = [String(repeating: "A", count: 43) + "=", String(repeating: "B", count: 42) + "A="]
        public var validationResult = 1
        public var vendorID = "599F9C00-92DC-4B5C-9464-7971F01F8370"
        public var date = Date(timeIntervalSince1970: 1_795_000_000)

        public init(validatedChain: [[UInt8]], servedChain: [[UInt8]]? = nil) {
            self.validatedChain = validatedChain
            self.servedChain = servedChain ?? validatedChain
        }
    }

    /// TrustKit-Android 1.1.5: members in `toJson()`'s insertion order (Android's `org.json` keeps it), `port`
    /// always 0 (the library's own comment says it is not returned), `date-time` as `DateFormat.format(
    /// "yyyy-MM-dd'T'HH:mm:ssZ")` of `android.text.format.DateFormat`, which has no `Z` field: the device's local
    /// time followed by a literal `Z`, PEM as `"-----BEGIN CERTIFICATE-----\n" +
    /// Base64.encodeToString(der, Base64.DEFAULT) + "-----END CERTIFICATE-----\n"` (76-column lines, each ending
    /// in LF), and `org.json`'s escaping (`/` as `\/`, no spaces).
    public static func android(_ failure: Failure, timeZone: TimeZone = TimeZone(secondsFromGMT: 3600)!) -> [UInt8] {
        let pem = { (der: [UInt8]) in "-----BEGIN CERTIFICATE-----\n" + androidBase64Default(der) + "-----END CERTIFICATE-----\n" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        let members: [(String, OrgJSON)] = [
            ("app-bundle-id", .string("com.example.app")),
            ("app-version", .string("42")),
            ("app-vendor-id", .string(failure.vendorID)),
            ("app-platform", .string("ANDROID")),
            ("trustkit-version", .string("1.1.5")),
            ("hostname", .string(failure.hostname)),
            ("port", .number(0)),
            ("noted-hostname", .string(failure.notedHostname)),
            ("include-subdomains", .bool(failure.includeSubdomains)),
            ("enforce-pinning", .bool(failure.enforcePinning)),
            ("validation-result", .number(failure.validationResult)),
            ("date-time", .string(formatter.string(from: failure.date))),
            ("validated-certificate-chain", .array(failure.validatedChain.map { .string(pem($0)) })),
            ("served-certificate-chain", .array(failure.servedChain.map { .string(pem($0)) })),
            ("known-pins", .array(failure.pins.map { .string("pin-sha256=\"\($0)\"") })),
        ]
        return Array(OrgJSON.object(members).text(indent: nil, level: 0).utf8)
    }

    /// The shape of TrustKit-Android's `docs/sample_report.json`: pretty-printed with two spaces (`toString(2)`),
    /// `trustkit-version` 1.0.0 without `app-platform-version`, port 443, a UTC `date-time`, and PEM whose base64
    /// lines are 64 columns joined by CRLF, with LF after the BEGIN line and before the END line and no final
    /// line break.
    public static func androidSampleShape(_ failure: Failure) -> [UInt8] {
        let pem = { (der: [UInt8]) in
            "-----BEGIN CERTIFICATE-----\n" + lines(of: Data(der).base64EncodedString(), length: 64).joined(separator: "\r\n") + "\n-----END CERTIFICATE-----"
        }
        let members: [(String, OrgJSON)] = [
            ("app-bundle-id", .string("com.datatheorem.testtrustkit2")),
            ("app-version", .string("1")),
            ("app-vendor-id", .string(failure.vendorID)),
            ("app-platform", .string("ANDROID")),
            ("trustkit-version", .string("1.0.0")),
            ("hostname", .string(failure.hostname)),
            ("port", .number(443)),
            ("noted-hostname", .string(failure.notedHostname)),
            ("include-subdomains", .bool(failure.includeSubdomains)),
            ("enforce-pinning", .bool(failure.enforcePinning)),
            ("validated-certificate-chain", .array(failure.validatedChain.map { .string(pem($0)) })),
            ("served-certificate-chain", .array(failure.servedChain.map { .string(pem($0)) })),
            ("date-time", .string(iso8601UTC(failure.date))),
            ("known-pins", .array(failure.pins.map { .string("pin-sha256=\"\($0)\"") })),
            ("validation-result", .number(failure.validationResult)),
        ]
        return Array(OrgJSON.object(members).text(indent: 2, level: 0).utf8)
    }

    /// TrustKit 3.0.0 for iOS: every member of `TSKPinFailureReport`'s dictionary, `NSJSONSerialization` with no
    /// options (compact, `/` escaped), `date-time` as `yyyy-MM-dd'T'HH:mm:ss'Z'` in UTC, no pin expiration (null),
    /// and PEM as `"-----BEGIN CERTIFICATE-----\n%@\n-----END CERTIFICATE-----"` around
    /// `base64EncodedStringWithOptions:NSDataBase64Encoding64CharacterLineLength` (64 columns, CRLF between lines).
    public static func iOS(_ failure: Failure) -> [UInt8] {
        let pem = { (der: [UInt8]) in
            "-----BEGIN CERTIFICATE-----\n" + lines(of: Data(der).base64EncodedString(), length: 64).joined(separator: "\r\n") + "\n-----END CERTIFICATE-----"
        }
        let members: [(String, OrgJSON)] = [
            ("app-bundle-id", .string("com.example.app")),
            ("app-version", .string("2.4.1")),
            ("app-platform", .string("IOS")),
            ("app-platform-version", .string("17.4.0")),
            ("app-vendor-id", .string(failure.vendorID)),
            ("trustkit-version", .string("3.0.0")),
            ("date-time", .string(iso8601UTC(failure.date))),
            ("hostname", .string(failure.hostname)),
            ("port", .number(443)),
            ("noted-hostname", .string(failure.notedHostname)),
            ("include-subdomains", .bool(failure.includeSubdomains)),
            ("enforce-pinning", .bool(failure.enforcePinning)),
            ("validated-certificate-chain", .array(failure.validatedChain.map { .string(pem($0)) })),
            ("known-pins", .array(failure.pins.map { .string("pin-sha256=\"\($0)\"") })),
            ("validation-result", .number(failure.validationResult)),
            ("known-pins-expiration-date", .null),
        ]
        return Array(OrgJSON.object(members).text(indent: nil, level: 0).utf8)
    }

    /// `android.util.Base64.encodeToString(bytes, Base64.DEFAULT)`: 76-column lines, each ending in LF.
    public static func androidBase64Default(_ bytes: [UInt8]) -> String {
        lines(of: Data(bytes).base64EncodedString(), length: 76).map { $0 + "\n" }.joined()
    }

    public static func lines(of text: String, length: Int) -> [String] {
        var result: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            result.append(String(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        return result
    }

    static func iso8601UTC(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        return formatter.string(from: date)
    }

    /// JSON as `org.json` and `NSJSONSerialization` write it: members in the given order, `/` escaped as `\/`.
    indirect enum OrgJSON {
        case string(String)
        case number(Int)
        case bool(Bool)
        case null
        case array([OrgJSON])
        case object([(String, OrgJSON)])

        func text(indent: Int?, level: Int) -> String {
            let newline = indent.map { "\n" + String(repeating: " ", count: $0 * (level + 1)) } ?? ""
            let closing = indent.map { "\n" + String(repeating: " ", count: $0 * level) } ?? ""
            let separator = indent == nil ? ":" : ": "
            switch self {
            case .string(let value): return Self.quoted(value)
            case .number(let value): return String(value)
            case .bool(let value): return value ? "true" : "false"
            case .null: return "null"
            case .array(let elements):
                return "[" + elements.map { newline + $0.text(indent: indent, level: level + 1) }.joined(separator: ",") + closing + "]"
            case .object(let members):
                return "{" + members.map { newline + Self.quoted($0.0) + separator + $0.1.text(indent: indent, level: level + 1) }.joined(separator: ",") + closing + "}"
            }
        }

        static func quoted(_ value: String) -> String {
            var result = "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": result += "\\\""
                case "\\": result += "\\\\"
                case "/": result += "\\/"
                case "\n": result += "\\n"
                case "\r": result += "\\r"
                case "\t": result += "\\t"
                case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
                default: result.unicodeScalars.append(scalar)
                }
            }
            return result + "\""
        }
    }
}
