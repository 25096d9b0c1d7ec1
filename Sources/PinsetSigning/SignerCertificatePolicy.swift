import Foundation

/// Limits on the signer certificates an offline root issues.
public struct SignerCertificatePolicy: Hashable, Sendable {
    /// Default validity: short, so a leaked online key forges bundles for weeks at most.
    public static let defaultValidityDays = 30
    /// Longest validity without an explicit override: a longer one defeats the point of a short-lived signer.
    public static let maximumValidityDays = 90
    /// Longest validity even with the override.
    public static let absoluteMaximumValidityDays = 825
    /// How far notBefore is backdated: the clock skew Pinset clients allow by default
    /// (`PinsetClientConfiguration.allowedClockSkew`), so a client whose clock runs that much slow accepts the
    /// first bundle signed under a new certificate.
    public static let clockSkew: TimeInterval = 60

    public var validityDays: Int
    public var allowLongValidity: Bool

    public init(validityDays: Int = Self.defaultValidityDays, allowLongValidity: Bool = false) {
        self.validityDays = validityDays
        self.allowLongValidity = allowLongValidity
    }

    /// Refuses a validity outside the limits, with what to do instead.
    public func check() throws(SigningIdentityError) {
        guard validityDays >= 1 else {
            throw SigningIdentityError("The validity is \(validityDays) days; give at least 1.")
        }
        if validityDays > Self.absoluteMaximumValidityDays {
            throw SigningIdentityError("The validity is \(validityDays) days; signer certificates are issued for at most \(Self.absoluteMaximumValidityDays) days. Use a short validity and renew.")
        }
        if validityDays > Self.maximumValidityDays && !allowLongValidity {
            throw SigningIdentityError("The validity is \(validityDays) days, more than \(Self.maximumValidityDays): a leaked signer key would forge bundles that long. Renew more often, or pass --allow-long-validity if this is intended.")
        }
    }
}
