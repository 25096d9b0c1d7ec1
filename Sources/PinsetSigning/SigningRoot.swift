import Foundation
import PinsetCore
import PinsetFileSystem
import X509

/// The offline root: the key and self-signed certificate that apps embed, used only to issue short-lived
/// signer certificates for the keys on online instances.
///
/// A leaked online key then forges bundles only until its certificate expires, and a signer certificate can be
/// replaced without an app update. The root must be a CA (OpenSSL refuses a path through an issuer without
/// basicConstraints CA:TRUE or without keyCertSign) and allow emailProtection (OpenSSL's S/MIME purpose
/// check applies the extendedKeyUsage of every certificate in the path).
public struct SigningRoot: Sendable {
    public let privateKey: Certificate.PrivateKey
    public let certificate: Certificate
    public let keyType: SigningKeyType

    /// Default validity of a new root: apps embed it, so its expiry ends every app release that ships only it.
    public static let defaultValidityDays = 7300

    public init(privateKey: Certificate.PrivateKey, certificate: Certificate) throws(SigningIdentityError) {
        let name = PinMaterial.describe(certificate.subject)
        guard privateKey.publicKey == certificate.publicKey else {
            throw SigningIdentityError("The root key does not belong to the root certificate '\(name)'. Give the key the certificate was made for.")
        }
        guard certificate.issuer == certificate.subject, certificate.publicKey.isValidSignature(certificate.signature, for: certificate) else {
            throw SigningIdentityError("The root certificate '\(name)' is not self-signed (issued by '\(PinMaterial.describe(certificate.issuer))'). Apps can only embed a self-signed root; use the last certificate of the chain.")
        }
        try Self.checkCertificateAuthority(certificate)
        self.keyType = try SigningIdentity.keyType(of: certificate.publicKey)
        self.privateKey = privateKey
        self.certificate = certificate
    }

    /// Refuses a certificate that cannot serve as the root apps embed: not self-signed, or not a CA that OpenSSL
    /// accepts as the issuer of S/MIME signers.
    public static func checkRootCertificate(_ certificate: Certificate) throws(SigningIdentityError) {
        guard certificate.issuer == certificate.subject, certificate.publicKey.isValidSignature(certificate.signature, for: certificate) else {
            throw SigningIdentityError("'\(PinMaterial.describe(certificate.subject))' is not self-signed (issued by '\(PinMaterial.describe(certificate.issuer))'). Apps can only embed a self-signed root.")
        }
        try checkCertificateAuthority(certificate)
    }

    /// Refuses a root that OpenSSL-based clients would not accept as the issuer of a signer certificate.
    static func checkCertificateAuthority(_ certificate: Certificate) throws(SigningIdentityError) {
        let name = PinMaterial.describe(certificate.subject)
        do {
            guard case .isCertificateAuthority = try certificate.extensions.basicConstraints else {
                throw SigningIdentityError("The root certificate '\(name)' has no basicConstraints CA:TRUE, so OpenSSL-based clients reject every certificate it issues (\"invalid CA certificate\"). It can keep signing bundles itself, but cannot become an offline root; see docs/offline-root.md.")
            }
            if let usage = try certificate.extensions.keyUsage, !usage.keyCertSign {
                throw SigningIdentityError("The root certificate '\(name)' has a keyUsage without keyCertSign, so clients reject every certificate it issues. It cannot become an offline root.")
            }
            if let extended = try certificate.extensions.extendedKeyUsage, !extended.contains(.emailProtection) {
                throw SigningIdentityError("The root certificate '\(name)' has an extendedKeyUsage without emailProtection; OpenSSL's S/MIME check rejects every signer under it. It cannot become an offline root.")
            }
        } catch let error as SigningIdentityError {
            throw error
        } catch {
            throw SigningIdentityError("The root certificate '\(name)' has malformed extensions: \(error).")
        }
    }

    /// A new key and self-signed root certificate (CA, path length 0, keyCertSign + digitalSignature,
    /// extendedKeyUsage emailProtection).
    public static func generate(keyType: SigningKeyType, commonName: String, validityDays: Int, now: Date = Date()) throws -> SigningRoot {
        let identity = try SigningIdentity.generate(keyType: keyType, commonName: commonName, validityDays: validityDays, now: now)
        return try SigningRoot(privateKey: identity.privateKey, certificate: identity.certificate)
    }

    public var certificateDER: [UInt8] { (try? PinMaterial.derBytes(of: certificate)) ?? [] }
}
