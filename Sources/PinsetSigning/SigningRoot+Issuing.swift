import Crypto
import Foundation
import PinsetCore
import SwiftASN1
import X509

extension SigningRoot {
    /// Issues a signer certificate for the key in `request`: keyUsage digitalSignature (critical),
    /// extendedKeyUsage emailProtection, basicConstraints CA:FALSE (critical), notBefore backdated by
    /// `SignerCertificatePolicy.clockSkew`.
    ///
    /// The request is untrusted input: its self-signature must verify (proof that the requester holds the
    /// key), its key must be one legacy clients verify and not weak (RSA below 2048 bits is refused), and
    /// only its subject is taken from it — extensions it asks for are ignored.
    public func issue(for request: CertificateSigningRequest, policy: SignerCertificatePolicy, now: Date = Date()) throws -> Certificate {
        try policy.check()
        guard request.publicKey.isValidSignature(request.signature, for: request) else {
            throw SigningIdentityError("The request's signature does not verify with the key it carries; it was altered or is not a signing request made by 'pinset signer request'. Nothing was issued.")
        }
        do {
            _ = try SigningIdentity.keyType(of: request.publicKey)
        } catch {
            throw SigningIdentityError("The request's key is refused: \(error.message) Nothing was issued.")
        }
        guard request.publicKey != certificate.publicKey else {
            throw SigningIdentityError("The request is for the root's own key. The online signer needs a key of its own; make one with 'pinset signer request'.")
        }
        let notBefore = now.addingTimeInterval(-SignerCertificatePolicy.clockSkew)
        let notAfter = now.addingTimeInterval(TimeInterval(policy.validityDays) * 86_400)
        if notAfter > certificate.notValidAfter {
            throw SigningIdentityError("The signer certificate would be valid until \(SigningIdentity.format(notAfter)), after the root expires (\(SigningIdentity.format(certificate.notValidAfter))); clients reject it past the root's expiry. Give fewer --days, and plan a root rollover (see 'Root rollover across app releases' in docs/offline-root.md).")
        }
        if now < certificate.notValidBefore {
            throw SigningIdentityError("The root is not valid before \(SigningIdentity.format(certificate.notValidBefore)). Check this machine's clock.")
        }
        let subject = request.subject.isEmpty ? try DistinguishedName { CommonName("Pinset online signer") } : request.subject
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.emailProtection])
            SubjectKeyIdentifier(hash: request.publicKey)
            AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier)
        }
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: request.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: certificate.subject,
            subject: subject,
            signatureAlgorithm: keyType.signatureAlgorithm,
            extensions: extensions,
            issuerPrivateKey: privateKey
        )
    }
}

extension SigningKeyType {
    /// SHA-256 always: every OpenSSL a legacy client may carry verifies it; RSA is PKCS#1 v1.5.
    var signatureAlgorithm: Certificate.SignatureAlgorithm {
        switch self {
        case .p256, .p384: .ecdsaWithSHA256
        case .rsa: .sha256WithRSAEncryption
        }
    }
}
