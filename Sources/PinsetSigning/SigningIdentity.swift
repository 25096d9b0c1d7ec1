import Crypto
import Foundation
import PinsetCore
import PinsetFileSystem
import SwiftASN1
import X509
import _CryptoExtras

/// The signing key and the certificate that clients trust it through.
///
/// The certificate is either the trust-server certificate that apps embed (self-signed) or one issued by it,
/// in which case the issuing chain is carried in `intermediates` and embedded in each bundle. It must satisfy
/// what legacy clients' `PKCS7_verify` demands of an S/MIME signer: valid now, keyUsage (if present) with
/// digitalSignature, extendedKeyUsage (if present) with emailProtection.
///
/// The private key is never printed: `description` names only the key type and certificate.
public struct SigningIdentity: Sendable, CustomStringConvertible {
    public let privateKey: Certificate.PrivateKey
    public let certificate: Certificate
    public let intermediates: [Certificate]
    /// The signer certificate followed by its issuing chain, as embedded in every bundle. Stored, so that the
    /// bundles of all the customers one identity signs share one array instead of each holding a copy.
    public let chain: [Certificate]
    public let keyType: SigningKeyType

    /// Always SHA-256: every OpenSSL a legacy client may carry verifies it, and RSA is PKCS#1 v1.5, never PSS.
    public var signatureAlgorithm: Certificate.SignatureAlgorithm { keyType.signatureAlgorithm }

    public init(privateKey: Certificate.PrivateKey, certificate: Certificate, intermediates: [Certificate] = []) throws(SigningIdentityError) {
        guard privateKey.publicKey == certificate.publicKey else {
            throw SigningIdentityError("The private key does not belong to the certificate '\(PinMaterial.describe(certificate.subject))'. Give the key that the certificate was issued for.")
        }
        self.keyType = try Self.keyType(of: certificate.publicKey)
        try Self.checkSignerUsage(certificate)
        self.privateKey = privateKey
        self.certificate = certificate
        self.intermediates = intermediates
        self.chain = [certificate] + intermediates
    }

    public var description: String {
        "SigningIdentity(\(keyType), certificate: \(PinMaterial.describe(certificate.subject)), notAfter: \(certificate.notValidAfter))"
    }

    /// DER of the signer certificate: what apps embed when the signer is the trust anchor.
    public var certificateDER: [UInt8] {
        (try? PinMaterial.derBytes(of: certificate)) ?? []
    }

    public var certificatePEM: String {
        (try? certificate.serializeAsPEM().pemString) ?? ""
    }

    /// Refuses a certificate that is outside its validity window at `now`: bundles signed with it would be
    /// rejected by every client.
    public func checkValidity(at now: Date) throws(SigningIdentityError) {
        if now < certificate.notValidBefore {
            throw SigningIdentityError("The signing certificate is not valid before \(certificate.notValidBefore); clients would reject bundles signed now. Check the system clock or the certificate.")
        }
        if now > certificate.notValidAfter {
            throw SigningIdentityError("The signing certificate expired on \(certificate.notValidAfter); clients reject bundles signed with it. Issue a new certificate from the trust anchor for this key.")
        }
    }

    // MARK: - Key type and usage rules

    static func keyType(of key: Certificate.PublicKey) throws(SigningIdentityError) -> SigningKeyType {
        if P256.Signing.PublicKey(key) != nil { return .p256 }
        if P384.Signing.PublicKey(key) != nil { return .p384 }
        if let rsa = _RSA.Signing.PublicKey(key) {
            let bits = rsa.keySizeInBits
            guard SigningKeyType.allowedRSABits.contains(bits) else {
                throw SigningIdentityError("The RSA key has \(bits) bits; Pinset signs with RSA keys of 2048 to 4096 bits.")
            }
            return .rsa(bits: bits)
        }
        throw SigningIdentityError("The signing key is of an unsupported type. Use ECDSA P-256 or P-384, or RSA with 2048 to 4096 bits; legacy clients cannot verify others.")
    }

    static func checkSignerUsage(_ certificate: Certificate) throws(SigningIdentityError) {
        do {
            if let usage = try certificate.extensions.keyUsage, !usage.digitalSignature {
                throw SigningIdentityError("The signing certificate has a keyUsage without digitalSignature; OpenSSL-based clients reject bundles it signs. Reissue it with keyUsage=digitalSignature.")
            }
            if let extended = try certificate.extensions.extendedKeyUsage, !extended.contains(.emailProtection) {
                throw SigningIdentityError("The signing certificate has an extendedKeyUsage without emailProtection; OpenSSL's S/MIME verification rejects it. Reissue it with extendedKeyUsage=emailProtection or without the extension.")
            }
        } catch let error as SigningIdentityError {
            throw error
        } catch {
            throw SigningIdentityError("The signing certificate's key usage extensions are malformed: \(error).")
        }
    }
}
