import Crypto
import Foundation
import PinsetCore
import PinsetFileSystem
import SwiftASN1
import X509
import _CryptoExtras

extension SigningIdentity {
    /// Loads a key and its certificate (PEM or DER). A PEM certificate file may continue with the issuing
    /// chain up to the trust anchor; those certificates are embedded in every bundle.
    ///
    /// Every key goes through here, so every key gets the same refusals: a symbolic link, a file group or
    /// others can read, one owned by another user, or one in a directory another user can write.
    public static func load(keyPath: String, certificatePath: String) throws -> SigningIdentity {
        let keyBytes = try PrivateFilePermissions.read(keyPath, limit: 1024 * 1024)
        let privateKey = try privateKey(fromFileContents: keyBytes, origin: keyPath)
        let certificateBytes = try AtomicFile.read(certificatePath, limit: 1024 * 1024)
        let certificates = try PinMaterial.certificates(fromFileContents: certificateBytes, origin: certificatePath)
        do {
            return try SigningIdentity(privateKey: privateKey, certificate: certificates[0], intermediates: Array(certificates.dropFirst()))
        } catch {
            throw SigningIdentityError("\(keyPath) and \(certificatePath): \(error.message)")
        }
    }

    /// Parses a private key: PEM (PKCS#8, SEC1 `EC PRIVATE KEY`, PKCS#1 `RSA PRIVATE KEY`) or DER of the same.
    public static func privateKey(fromFileContents bytes: [UInt8], origin: String) throws(SigningIdentityError) -> Certificate.PrivateKey {
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN ") {
            if text.contains("ENCRYPTED PRIVATE KEY") || text.contains("Proc-Type: 4,ENCRYPTED") {
                throw SigningIdentityError("\(origin) is an encrypted private key. The server signs unattended, so store it decrypted with mode 0600: 'openssl pkey -in \(origin) -out key.pem'.")
            }
            // Key files often start with an `EC PARAMETERS` block; the key is the PRIVATE KEY block.
            let documents = (try? PEMDocument.parseMultiple(pemString: text)) ?? []
            guard let keyDocument = documents.first(where: { $0.discriminator.hasSuffix("PRIVATE KEY") }) else {
                throw SigningIdentityError("\(origin) holds no PEM private key. Give a 'PRIVATE KEY', 'EC PRIVATE KEY' or 'RSA PRIVATE KEY' file.")
            }
            do {
                return try Certificate.PrivateKey(pemDocument: keyDocument)
            } catch {
                throw SigningIdentityError("\(origin) has a '\(keyDocument.discriminator)' block that could not be read as a P-256, P-384 or RSA key: \(error).")
            }
        }
        if let key = try? Certificate.PrivateKey(derBytes: bytes) { return key }
        if let key = try? _RSA.Signing.PrivateKey(derRepresentation: bytes) { return Certificate.PrivateKey(key) }
        if let key = try? P256.Signing.PrivateKey(derRepresentation: bytes) { return Certificate.PrivateKey(key) }
        if let key = try? P384.Signing.PrivateKey(derRepresentation: bytes) { return Certificate.PrivateKey(key) }
        throw SigningIdentityError("\(origin) is not a private key in PEM or DER (PKCS#8, SEC1 or PKCS#1) form.")
    }

    /// Writes the key (mode 0600), the signer certificate with its chain as PEM, and the trust anchor (the
    /// chain's last certificate, which apps embed) as DER, each atomically.
    public func write(keyPath: String, certificatePEMPath: String, certificateDERPath: String) throws {
        // Encoded before anything is written, so a failure leaves no key without its anchor.
        let anchorDER = try trustAnchorDER
        let keyPEM = try privateKey.serializeAsPEM().pemString + "\n"
        try AtomicFile.write(Array(keyPEM.utf8), to: keyPath, mode: 0o600)
        var chainPEM = certificatePEM + "\n"
        for intermediate in intermediates {
            chainPEM += try intermediate.serializeAsPEM().pemString + "\n"
        }
        try AtomicFile.write(Array(chainPEM.utf8), to: certificatePEMPath, mode: 0o644)
        try AtomicFile.write(anchorDER, to: certificateDERPath, mode: 0o644)
    }
}
