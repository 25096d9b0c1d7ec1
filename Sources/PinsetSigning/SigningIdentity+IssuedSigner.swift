import Foundation
import PinsetCore
import X509

extension SigningIdentity {
    /// The identity an issued signer certificate makes with its pending key, checked against the root the apps
    /// embed now: it must belong to `privateKey`, be issued (name and signature) by `anchor`, carry keyUsage
    /// digitalSignature and extendedKeyUsage emailProtection (both present), not be a CA, and be valid at `now`.
    ///
    /// Stricter than what `SigningIdentity.init` accepts from imported files: a certificate that `pinset root
    /// issue` did not make the way clients need is refused before it replaces a working identity.
    public static func issuedSigner(
        certificate: Certificate,
        privateKey: Certificate.PrivateKey,
        anchor: Certificate,
        now: Date
    ) throws(SigningIdentityError) -> SigningIdentity {
        let name = "The certificate '\(PinMaterial.describe(certificate.subject))'"
        guard privateKey.publicKey == certificate.publicKey else {
            throw SigningIdentityError("\(name) is not for the pending signer key. Give the certificate issued for the request that 'pinset signer request' made last (a newer request replaces the pending key).")
        }
        guard certificate != anchor, certificate.publicKey != anchor.publicKey else {
            throw SigningIdentityError("\(name) is the root itself. Install a signer certificate issued by the root with 'pinset root issue'.")
        }
        guard certificate.issuer == anchor.subject, anchor.publicKey.isValidSignature(certificate.signature, for: certificate) else {
            throw SigningIdentityError("\(name) is not issued by the root the apps embed now ('\(PinMaterial.describe(anchor.subject))', the trust anchor of this identity); apps would reject every bundle it signs. Issue it from that root.")
        }
        do {
            guard let usage = try certificate.extensions.keyUsage, usage.digitalSignature else {
                throw SigningIdentityError("\(name) has no keyUsage with digitalSignature; OpenSSL-based clients reject bundles it signs. Issue it with 'pinset root issue'.")
            }
            guard let extended = try certificate.extensions.extendedKeyUsage, extended.contains(.emailProtection) else {
                throw SigningIdentityError("\(name) has no extendedKeyUsage with emailProtection; OpenSSL's S/MIME verification rejects bundles it signs. Issue it with 'pinset root issue'.")
            }
            if case .isCertificateAuthority = try certificate.extensions.basicConstraints {
                throw SigningIdentityError("\(name) is a CA (basicConstraints CA:TRUE); an online signer must not be able to issue certificates, and Pinset clients refuse CA signers. Issue it with 'pinset root issue'.")
            }
        } catch let error as SigningIdentityError {
            throw error
        } catch {
            throw SigningIdentityError("\(name) has malformed extensions: \(error).")
        }
        let identity = try SigningIdentity(privateKey: privateKey, certificate: certificate, intermediates: [anchor])
        _ = try identity.checkChain(at: now)
        return identity
    }
}
