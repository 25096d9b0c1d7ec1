import Crypto
import Foundation
import PinsetCore
import SwiftASN1
import X509
import _CryptoExtras

/// A new online signer key and the PKCS#10 request that carries its public key to the offline root.
public struct SignerRequest: Sendable {
    public let privateKey: Certificate.PrivateKey
    public let request: CertificateSigningRequest

    /// A fresh key of `keyType` and a request for it, signed with it (SHA-256; PKCS#1 v1.5 for RSA, which
    /// `openssl req -verify` accepts).
    public static func generate(keyType: SigningKeyType, commonName: String) throws -> SignerRequest {
        let privateKey = try SigningIdentity.generateKey(keyType)
        let subject = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("Pinset trust server")
        }
        let request = try CertificateSigningRequest(
            version: .v1,
            subject: subject,
            privateKey: privateKey,
            attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: keyType.signatureAlgorithm
        )
        return SignerRequest(privateKey: privateKey, request: request)
    }

    public var requestPEM: String {
        get throws { try request.serializeAsPEM().pemString + "\n" }
    }

    /// Parses a request in PEM (`CERTIFICATE REQUEST`) or DER form.
    public static func parseRequest(_ bytes: [UInt8], origin: String) throws(SigningIdentityError) -> CertificateSigningRequest {
        do {
            if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN ") {
                return try CertificateSigningRequest(pemEncoded: text)
            }
            return try CertificateSigningRequest(derEncoded: bytes)
        } catch {
            // swift-crypto refuses to parse RSA keys below 2048 bits, so a weak key ends up here too.
            throw SigningIdentityError("\(origin) could not be read as a PKCS#10 certificate signing request (\(error)). Requests must be PEM or DER and carry a P-256, P-384 or RSA key of 2048 to 4096 bits; weaker keys are refused. Give the file 'pinset signer request' wrote.")
        }
    }
}
