import Crypto
import Foundation
import PinsetCore
import SwiftASN1
import X509
import _CryptoExtras

extension SigningIdentity {
    /// Creates a fresh key and a self-signed trust-server certificate for it.
    ///
    /// The certificate carries keyUsage digitalSignature (critical) and extendedKeyUsage emailProtection so that
    /// both OpenSSL's S/MIME purpose check and Pinset's own client accept it as a bundle signer.
    public static func generate(
        keyType: SigningKeyType,
        commonName: String,
        validityDays: Int,
        now: Date = Date()
    ) throws -> SigningIdentity {
        // The name goes into a trust anchor apps embed for years, and is shown on terminals and dashboards.
        guard (1...64).contains(commonName.count), !commonName.unicodeScalars.contains(where: TerminalText.needsEscaping) else {
            throw InputError("The common name must be 1 to 64 printable characters, without line breaks or control characters; '\(TerminalText.escape(String(commonName.prefix(64))))' is not. Nothing was created.")
        }
        let privateKey = try generateKey(keyType)
        let name = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("Pinset trust server")
        }
        // Backdated a little so a client whose clock runs slow still accepts the first bundles.
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(TimeInterval(validityDays) * 86_400)
        let extensions = try Certificate.Extensions {
            // A CA (path length 0) so that this anchor can later issue a separate signer certificate without
            // an app update; digitalSignature so that it can sign bundles itself.
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.emailProtection])
            SubjectKeyIdentifier(hash: privateKey.publicKey)
        }
        let signatureAlgorithm: Certificate.SignatureAlgorithm = if case .rsa = keyType { .sha256WithRSAEncryption } else { .ecdsaWithSHA256 }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: privateKey.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: name,
            subject: name,
            signatureAlgorithm: signatureAlgorithm,
            extensions: extensions,
            issuerPrivateKey: privateKey
        )
        return try SigningIdentity(privateKey: privateKey, certificate: certificate)
    }

    /// A fresh private key of `keyType`.
    public static func generateKey(_ keyType: SigningKeyType) throws -> Certificate.PrivateKey {
        switch keyType {
        case .p256: return Certificate.PrivateKey(P256.Signing.PrivateKey())
        case .p384: return Certificate.PrivateKey(P384.Signing.PrivateKey())
        case .rsa(let bits):
            guard let size = rsaKeySize(bits: bits) else {
                throw SigningIdentityError("RSA keys of \(bits) bits are not offered; use 2048, 3072 or 4096.")
            }
            return Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: size))
        }
    }

    private static func rsaKeySize(bits: Int) -> _RSA.Signing.KeySize? {
        switch bits {
        case 2048: .bits2048
        case 3072: .bits3072
        case 4096: .bits4096
        default: nil
        }
    }
}

extension SubjectKeyIdentifier {
    init(hash key: Certificate.PublicKey) {
        let spki = (try? PinMaterial.subjectPublicKeyInfo(of: key)) ?? []
        self.init(keyIdentifier: ArraySlice(Insecure.SHA1.hash(data: spki)))
    }
}
