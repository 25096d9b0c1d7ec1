import Foundation
import PinsetCore
import X509

extension SigningIdentity {
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
