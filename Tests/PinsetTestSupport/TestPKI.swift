import Crypto
import Foundation
import PinsetCore
import PinsetSigning
import SwiftASN1
import X509

/// Keys and certificates made inside tests (never committed): a CA, leaves it issues, self-signed certificates.
public enum TestPKI {
    public struct Issued: Sendable {
        public let certificate: Certificate
        public let privateKey: Certificate.PrivateKey

        public var certificatePEM: String { (try? certificate.serializeAsPEM().pemString) ?? "" }
        public var certificateDER: [UInt8] { (try? PinMaterial.derBytes(of: certificate)) ?? [] }
        public var privateKeyPEM: String { (try? privateKey.serializeAsPEM().pemString) ?? "" }
        public var spkiSHA256: SHA256Fingerprint {
            SHA256Fingerprint(of: (try? PinMaterial.subjectPublicKeyInfo(of: certificate.publicKey)) ?? [])
        }
    }

    public static func name(_ commonName: String) -> DistinguishedName {
        (try? DistinguishedName { CommonName(commonName) }) ?? DistinguishedName()
    }

    /// A CA certificate (self-signed, keyCertSign).
    public static func certificateAuthority(
        commonName: String = "Pinset Test CA",
        key: Certificate.PrivateKey = Certificate.PrivateKey(P256.Signing.PrivateKey()),
        notBefore: Date = Date().addingTimeInterval(-3600),
        notAfter: Date = Date().addingTimeInterval(86_400 * 30),
        extensions: Certificate.Extensions? = nil
    ) throws -> Issued {
        let extensions = try extensions ?? Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey,
            notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: name(commonName), subject: name(commonName),
            signatureAlgorithm: signatureAlgorithm(for: key), extensions: extensions, issuerPrivateKey: key
        )
        return Issued(certificate: certificate, privateKey: key)
    }

    /// A leaf issued by `issuer`. `dnsNames` become subjectAltNames (a TLS server certificate);
    /// `extensions` replaces the default set entirely when given.
    public static func leaf(
        commonName: String,
        dnsNames: [String] = [],
        ipAddresses: [String] = [],
        issuer: Issued,
        key: Certificate.PrivateKey = Certificate.PrivateKey(P256.Signing.PrivateKey()),
        notBefore: Date = Date().addingTimeInterval(-3600),
        notAfter: Date = Date().addingTimeInterval(86_400 * 30),
        extensions: Certificate.Extensions? = nil
    ) throws -> Issued {
        let sans: [GeneralName] = dnsNames.map { .dnsName($0) } + ipAddresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice(ipv4Bytes($0)))) }
        let defaultExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth, .emailProtection])
            if !sans.isEmpty { SubjectAlternativeNames(sans) }
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey,
            notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: issuer.certificate.subject, subject: name(commonName),
            signatureAlgorithm: signatureAlgorithm(for: issuer.privateKey), extensions: extensions ?? defaultExtensions,
            issuerPrivateKey: issuer.privateKey
        )
        return Issued(certificate: certificate, privateKey: key)
    }

    /// An attacker's certificate mesh: `keys` keys and `keys`² CA certificates, all named `commonName`, the one of
    /// key i issued by key j for every pair. Path building through it never reaches a root and, unbounded, tries
    /// every order of the keys, a signature check per candidate. `leaf` is issued under the name by the first key.
    public static func certificateMesh(keys count: Int, commonName: String = "Mesh", leafName: String = "Pinset Test Trust Server") throws -> (leaf: Issued, mesh: [Certificate]) {
        let keys = (0..<count).map { _ in Certificate.PrivateKey(P256.Signing.PrivateKey()) }
        let authorities = try keys.map { try certificateAuthority(commonName: commonName, key: $0) }
        var mesh: [Certificate] = []
        for subject in keys {
            for issuer in authorities {
                mesh.append(try Certificate(
                    version: .v3, serialNumber: .init(), publicKey: subject.publicKey,
                    notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86_400),
                    issuer: name(commonName), subject: name(commonName), signatureAlgorithm: .ecdsaWithSHA256,
                    extensions: issuer.certificate.extensions, issuerPrivateKey: issuer.privateKey
                ))
            }
        }
        let leaf = try leaf(commonName: leafName, dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], issuer: authorities[0])
        return (leaf, mesh)
    }

    /// A self-signed trust-server signing identity, as `pinset init` makes.
    public static func signingIdentity(_ keyType: SigningKeyType = .p256, commonName: String = "Pinset Test Trust Server") throws -> SigningIdentity {
        try SigningIdentity.generate(keyType: keyType, commonName: commonName, validityDays: 365)
    }

    static func signatureAlgorithm(for key: Certificate.PrivateKey) -> Certificate.SignatureAlgorithm {
        key.publicKey.description.contains("RSA") ? .sha256WithRSAEncryption : .ecdsaWithSHA256
    }

    static func ipv4Bytes(_ text: String) -> [UInt8] {
        text.split(separator: ".").compactMap { UInt8($0) }
    }
}
