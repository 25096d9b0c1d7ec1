import Foundation

/// A pin-failure report as an app sends it: TrustKit's format (`TSKPinFailureReport`), which Pinset clients send
/// too, with `pinset-version` added.
///
/// The JSON members, all named in kebab case: `app-bundle-id`, `app-version`, `app-vendor-id`, `hostname`,
/// `port`, `noted-hostname`, `include-subdomains`, `validated-certificate-chain` (PEM certificates, leaf first),
/// `known-pins` (`pin-sha256="<base64>"`) and `validation-result` are required; `app-platform`,
/// `app-platform-version`, `trustkit-version`, `enforce-pinning`, `date-time` (kept as text: TrustKit writes
/// `yyyy-MM-ddTHH:mm:ssZ` in UTC; TrustKit-Android the same shape in the device's local time, its `Z` a literal
/// letter that `android.text.format.DateFormat` leaves as it is, so it names no zone),
/// `known-pins-expiration-date` (`yyyy-MM-dd`) and `pinset-version` may be absent or null (older TrustKit
/// releases send no platform fields). Other members, such as TrustKit-Android's `served-certificate-chain`, are
/// ignored. See ``parse(_:)`` for the limits.
public struct PinFailureReport: Sendable, Equatable {
    public var appBundleID: String
    public var appVersion: String
    /// Identifies the installation (TrustKit sends `identifierForVendor`). Servers use it only, hashed, to count
    /// an installation once per hour.
    public var appVendorID: String
    public var appPlatform: String?
    public var appPlatformVersion: String?
    public var trustkitVersion: String?
    /// The host the app connected to.
    public var hostname: String
    public var port: Int
    /// The pinned entry that applied: the host itself, or a parent with include-subdomains.
    public var notedHostname: String
    public var includeSubdomains: Bool
    public var enforcePinning: Bool?
    /// The chain the server sent, as PEM certificates, leaf first.
    public var validatedCertificateChain: [String]
    /// The pins the app held, each `pin-sha256="<base64>"`.
    public var knownPins: [String]
    /// TrustKit's `TSKTrustEvaluationResult`: 1 no pin matched, 2 invalid chain, 3 invalid parameters,
    /// 4 no pin matched and the chain ends at a user-defined trust anchor (TrustKit's
    /// `TSKTrustEvaluationFailedUserDefinedTrustAnchor`, Android's `FAILED_USER_DEFINED_TRUST_ANCHOR`), 5 no SPKI
    /// hash could be computed.
    public var validationResult: Int
    public var dateTime: String?
    public var knownPinsExpirationDate: String?
    /// The pin-set content version the app held; nil in TrustKit's reports.
    public var pinsetVersion: Int64?

    public init(
        appBundleID: String, appVersion: String, appVendorID: String, appPlatform: String? = nil,
        appPlatformVersion: String? = nil, trustkitVersion: String? = nil, hostname: String, port: Int,
        notedHostname: String, includeSubdomains: Bool, enforcePinning: Bool? = nil, validatedCertificateChain: [String],
        knownPins: [String], validationResult: Int, dateTime: String? = nil, knownPinsExpirationDate: String? = nil,
        pinsetVersion: Int64? = nil
    ) {
        self.appBundleID = appBundleID
        self.appVersion = appVersion
        self.appVendorID = appVendorID
        self.appPlatform = appPlatform
        self.appPlatformVersion = appPlatformVersion
        self.trustkitVersion = trustkitVersion
        self.hostname = hostname
        self.port = port
        self.notedHostname = notedHostname
        self.includeSubdomains = includeSubdomains
        self.enforcePinning = enforcePinning
        self.validatedCertificateChain = validatedCertificateChain
        self.knownPins = knownPins
        self.validationResult = validationResult
        self.dateTime = dateTime
        self.knownPinsExpirationDate = knownPinsExpirationDate
        self.pinsetVersion = pinsetVersion
    }

    /// TrustKit's result code when no pin matched the chain.
    public static let noMatchingPin = 1

    /// The JSON members this format has.
    public static let memberNames: Set<String> = [
        "app-bundle-id", "app-version", "app-vendor-id", "app-platform", "app-platform-version", "trustkit-version",
        "hostname", "port", "noted-hostname", "include-subdomains", "enforce-pinning", "validated-certificate-chain",
        "known-pins", "validation-result", "date-time", "known-pins-expiration-date", "pinset-version",
    ]

    /// The report as JSON, absent optional members left out, members in name order.
    public func json() -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        func member(_ name: String, _ write: (inout JSONWriter) -> Void) {
            writer.key(name)
            write(&writer)
        }
        member("app-bundle-id") { $0.string(appBundleID) }
        if let appPlatform { member("app-platform") { $0.string(appPlatform) } }
        if let appPlatformVersion { member("app-platform-version") { $0.string(appPlatformVersion) } }
        member("app-vendor-id") { $0.string(appVendorID) }
        member("app-version") { $0.string(appVersion) }
        if let dateTime { member("date-time") { $0.string(dateTime) } }
        if let enforcePinning { member("enforce-pinning") { $0.bool(enforcePinning) } }
        member("hostname") { $0.string(hostname) }
        member("include-subdomains") { $0.bool(includeSubdomains) }
        member("known-pins") { $0.stringArray(knownPins) }
        if let knownPinsExpirationDate { member("known-pins-expiration-date") { $0.string(knownPinsExpirationDate) } }
        member("noted-hostname") { $0.string(notedHostname) }
        if let pinsetVersion { member("pinset-version") { $0.integer(pinsetVersion) } }
        member("port") { $0.integer(Int64(port)) }
        if let trustkitVersion { member("trustkit-version") { $0.string(trustkitVersion) } }
        member("validated-certificate-chain") { $0.stringArray(validatedCertificateChain) }
        member("validation-result") { $0.integer(Int64(validationResult)) }
        writer.endObject()
        return writer.bytes
    }
}
