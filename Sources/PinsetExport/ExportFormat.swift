/// The static configurations a customer's pins can be written as, for apps and places that cannot fetch a bundle.
public enum ExportFormat: String, CaseIterable, Sendable {
    /// Apple's `NSAppTransportSecurity` → `NSPinnedDomains`, an Info.plist fragment (iOS 14, macOS 11).
    case nsPinnedDomains = "ns-pinned-domains"
    /// Android's Network Security Configuration (`res/xml/network_security_config.xml`).
    case androidNetworkSecurityConfig = "android-nsc"
    /// TrustKit's `TSKConfiguration` dictionary, as an Info.plist fragment.
    case trustKit = "trustkit"
    /// OkHttp's `CertificatePinner.Builder()` calls, in Kotlin.
    case okHttp = "okhttp"
    /// The customer's signed bundle, for `PinsetUpdater.seed(withBundle:)` at an app's first launch.
    case seed

    public static var spellings: String { allCases.map(\.rawValue).joined(separator: ", ") }

    public init(argument: String) throws {
        guard let format = ExportFormat(rawValue: argument) else {
            throw ExportRefusal("Unknown export format '\(argument.prefix(40))'. Give --format with one of: \(Self.spellings).")
        }
        self = format
    }

    /// Whether the format can carry a date after which its pins stop being enforced.
    public var hasExpiration: Bool { self == .androidNetworkSecurityConfig || self == .trustKit }

    /// The name of the platform or library, as the warnings and notes say it.
    public var platform: String {
        switch self {
        case .nsPinnedDomains: "App Transport Security"
        case .androidNetworkSecurityConfig: "Android"
        case .trustKit: "TrustKit"
        case .okHttp: "OkHttp"
        case .seed: "the Pinset client"
        }
    }
}

/// Why nothing was exported: what is wrong, where, and how to fix it.
public struct ExportRefusal: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
