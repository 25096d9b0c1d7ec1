import SwiftASN1
import X509

/// OpenSSL's S/MIME signing purpose (`smime_sign`) for the certificates of a signer's chain: what
/// `PKCS7_verify` in legacy clients and `openssl smime -verify` require of them, shared by the bundle verifier
/// and the check of an identity's chain so both refuse the same chains.
package enum SMIMEUsage {
    /// Netscape certificate type (2.16.840.1.113730.1.1), a BIT STRING; OpenSSL still honours it.
    package static let netscapeCertificateType: ASN1ObjectIdentifier = [2, 16, 840, 1, 113_730, 1, 1]

    /// Whether `certificate`'s extendedKeyUsage allows S/MIME: absent, or listing emailProtection
    /// (anyExtendedKeyUsage alone does not do). OpenSSL applies this to every certificate of the chain.
    package static func extendedKeyUsageAllowsSMIME(_ certificate: Certificate) throws -> Bool {
        guard let extended = try certificate.extensions.extendedKeyUsage else { return true }
        return extended.contains(.emailProtection)
    }

    /// Why OpenSSL's `check_ca` refuses `certificate` as an issuer of an S/MIME chain, or `nil`: a keyUsage
    /// without keyCertSign; basicConstraints that are not a CA's; or neither basicConstraints nor keyUsage,
    /// unless it is a version 1 self-signed root or its Netscape certificate type names an S/MIME CA.
    package static func issuerProblem(_ certificate: Certificate) throws -> String? {
        let constraints = try certificate.extensions.basicConstraints
        if case .notCertificateAuthority = constraints { return "its basicConstraints say it is not a CA" }
        let usage = try certificate.extensions.keyUsage
        if let usage, !usage.keyCertSign { return "its keyUsage lacks keyCertSign" }
        if constraints != nil || usage != nil { return nil }
        if certificate.version == .v1, certificate.issuer == certificate.subject { return nil }
        if let type = certificate.extensions[oid: netscapeCertificateType] {
            let bits = try ASN1BitString(derEncoded: type.value)
            // nsCertType bit 6, S/MIME CA.
            if (bits.bytes.first ?? 0) & 0x02 != 0 { return nil }
        }
        return "it has neither basicConstraints CA:TRUE nor a keyUsage"
    }
}
