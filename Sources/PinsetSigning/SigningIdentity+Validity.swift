import Foundation
import PinsetCore
import X509

/// How long the server keeps a bundle valid and how often it signs again: together, how long before its expiry a
/// signing identity stops being usable. A pass refuses an identity that expires before the bundles it would sign,
/// so an identity must still be valid for a bundle lifetime after the last pass that may use it, which comes up to
/// one re-sign interval later than any given moment.
public struct SigningSchedule: Sendable, Hashable {
    public var bundleLifetimeSeconds: Int64
    public var resignIntervalSeconds: Int64

    public init(bundleLifetimeSeconds: Int64, resignIntervalSeconds: Int64) {
        self.bundleLifetimeSeconds = bundleLifetimeSeconds
        self.resignIntervalSeconds = resignIntervalSeconds
    }

    /// The server's defaults: bundles valid for a day, signed every five minutes.
    public static let `default` = SigningSchedule(bundleLifetimeSeconds: BundleBounds.defaultLifetimeSeconds, resignIntervalSeconds: 300)

    /// The shortest remaining validity an identity, signer certificate or root may have when it is made or installed.
    public var minimumRemainingValidity: TimeInterval { TimeInterval(bundleLifetimeSeconds + resignIntervalSeconds) }

    /// `minimumRemainingValidity` as people read it, e.g. "1 day and 300 s (a bundle lifetime of 86400 s plus a
    /// re-sign interval of 300 s)".
    public var minimumDescription: String {
        "\(bundleLifetimeSeconds + resignIntervalSeconds) s (a bundle lifetime of \(bundleLifetimeSeconds) s plus a re-sign interval of \(resignIntervalSeconds) s)"
    }

    /// The fewest whole days of validity a new certificate must be given.
    public var minimumValidityDays: Int { Int((minimumRemainingValidity / 86_400).rounded(.down)) + 1 }

    /// Refuses a certificate (`role`: "signing certificate", "root certificate", …) that stays valid for less than
    /// `minimumRemainingValidity` from `now`.
    ///
    /// - Throws: `SigningIdentityError` naming the certificate, its expiry and the minimum.
    public func requireRemainingValidity(of certificate: Certificate, role: String, at now: Date) throws(SigningIdentityError) {
        guard certificate.notValidAfter < now.addingTimeInterval(minimumRemainingValidity) else { return }
        let left = max(0, Int(certificate.notValidAfter.timeIntervalSince(now)))
        throw SigningIdentityError("The \(role) '\(PinMaterial.describe(certificate.subject))' expires on \(certificate.notValidAfter.formatted(.iso8601)), \(left) s from now; it must stay valid for at least \(minimumDescription), or the server stops signing with it before its bundles expire. Nothing was changed. Give it a longer validity: at least \(minimumValidityDays) days.")
    }
}

extension SigningIdentity {
    /// Refuses an identity about to be made, installed or adopted when a certificate of it (the signer, the chain,
    /// the root apps embed) stays valid for less than `schedule.minimumRemainingValidity` from `now`: the server
    /// would accept it and then stop signing with it before its bundles' expiry, leaving its customers unsigned.
    ///
    /// - Throws: `SigningIdentityError` naming the certificate, its expiry and the minimum.
    public func requireRemainingValidity(at now: Date, schedule: SigningSchedule) throws(SigningIdentityError) {
        for (index, certificate) in chain.enumerated() {
            let role = index == 0 ? "signing certificate" : index == chain.count - 1 ? "root certificate" : "chain certificate \(index)"
            try schedule.requireRemainingValidity(of: certificate, role: role, at: now)
        }
    }

    /// Why bundles signed now and valid until `bundleExpires` must not be signed with this identity, or `nil`.
    ///
    /// Every certificate that goes into the bundle is checked — the signer and each chain member — because
    /// a client refuses the bundle if any of them is outside its validity window, and a Pinset client keeps a
    /// bundle until its `expires`: a certificate that expires before then would strand it mid-way.
    public func validityProblem(at now: Date, bundleExpires: Date) -> String? {
        for (index, certificate) in ([certificate] + intermediates).enumerated() {
            let role = index == 0 ? "signing certificate" : "chain certificate \(index) ('\(PinMaterial.describe(certificate.subject))')"
            if now < certificate.notValidBefore {
                return "the \(role) is not valid before \(Self.format(certificate.notValidBefore)); clients would reject bundles signed now. Check the system clock or the certificate."
            }
            if now > certificate.notValidAfter {
                return "the \(role) expired on \(Self.format(certificate.notValidAfter)); clients reject bundles signed with it. Issue a new certificate for this key from the trust anchor the apps embed."
            }
            if bundleExpires > certificate.notValidAfter {
                return "the \(role) expires on \(Self.format(certificate.notValidAfter)), before the bundles' expiry \(Self.format(bundleExpires)); renew it now, or lower bundleLifetimeSeconds until it is renewed."
            }
        }
        return nil
    }

    /// Why this identity must not sign bundles that carry the revocation floor `signersNotBefore` (Unix
    /// seconds), or `nil`: clients refuse a bundle whose signer certificate is valid from an earlier time.
    public func revocationFloorProblem(_ signersNotBefore: Int64?) -> String? {
        guard let signersNotBefore, certificate.isRevoked(bySignersNotBefore: signersNotBefore) else { return nil }
        return "the signing certificate is valid from \(Self.format(certificate.notValidBefore)), earlier than the revocation floor \(Self.format(Date(timeIntervalSince1970: TimeInterval(signersNotBefore)))) (signers-not-before \(signersNotBefore)); clients refuse bundles it signs. Install a signer certificate issued after the floor ('pinset signer request', 'pinset root issue', 'pinset signer install')."
    }

    /// When every certificate of this identity is valid: the latest notBefore and the earliest notAfter.
    /// Computed once per loaded identity, so a pass compares two dates instead of walking the chain.
    public var validityWindow: ClosedRange<Date> {
        let chain = [certificate] + intermediates
        let from = chain.map(\.notValidBefore).max() ?? certificate.notValidBefore
        let until = chain.map(\.notValidAfter).min() ?? certificate.notValidAfter
        return from <= until ? from...until : until...until
    }

    static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
