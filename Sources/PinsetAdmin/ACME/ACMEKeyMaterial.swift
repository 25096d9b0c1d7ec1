import Foundation
import PinsetCore
import PinsetFileSystem
import PinsetSigning
import SwiftASN1
import X509

/// Keys, requests and certificates of a renewal. Keys are known by their pin (base64 SHA-256 of the DER
/// SubjectPublicKeyInfo), which is public; private keys are written 0600 and never printed.
public enum ACMEKeyMaterial {
    /// A new private key of `type`, written to `path` (0600, atomically); its pin.
    @discardableResult
    public static func generateKey(_ type: SigningKeyType, at path: String) throws(ACMEFailure) -> String {
        do {
            let key = try SigningIdentity.generateKey(type)
            try AtomicFile.write(Array((try key.serializeAsPEM().pemString + "\n").utf8), to: path, mode: 0o600)
            return try pin(of: key.publicKey)
        } catch {
            throw ACMEFailure(.error, "could not generate a \(type) key at \(path): \(error).")
        }
    }

    /// The private key in `path` (PEM, alone or in front of a chain), which must be the running user's, 0600, and
    /// not a link.
    public static func privateKey(at path: String) throws(ACMEFailure) -> Certificate.PrivateKey {
        let bytes: [UInt8]
        do {
            bytes = try PrivateFilePermissions.read(path, limit: 1024 * 1024)
        } catch let error as PrivateFilePermissions.TooOpen {
            throw ACMEFailure(.error, "'\(path)' is readable by group or others (mode \(String(error.mode & 0o777, radix: 8))): chmod 0600 '\(path)', and consider the key disclosed (delete it and run 'pinset acme bootstrap' for a new one).")
        } catch {
            throw ACMEFailure(.error, "cannot read the private key \(path): \(error).")
        }
        do {
            return try SigningIdentity.privateKey(fromFileContents: bytes, origin: path)
        } catch {
            throw ACMEFailure(.error, "cannot read the private key \(path): \(error.message)")
        }
    }

    /// The PEM block of the private key in `path`, as it is there (a combined file is rewritten with it).
    static func privateKeyBlock(at path: String) throws(ACMEFailure) -> String {
        let key = try privateKey(at: path)
        guard let text = try? String(decoding: PrivateFilePermissions.read(path, limit: 1024 * 1024), as: UTF8.self),
              let block = (try? PEMDocument.parseMultiple(pemString: text))?.first(where: { $0.discriminator.hasSuffix("PRIVATE KEY") }),
              let parsed = try? Certificate.PrivateKey(pemDocument: block), parsed.publicKey == key.publicKey
        else {
            throw ACMEFailure(.error, "cannot take the private key out of \(path) unchanged. Nothing was deployed.")
        }
        return block.pemString + "\n"
    }

    public static func pin(of key: Certificate.PublicKey) throws -> String {
        SHA256Fingerprint(of: try PinMaterial.subjectPublicKeyInfo(of: key)).base64
    }

    public static func pin(ofKeyAt path: String) throws(ACMEFailure) -> String {
        let key = try privateKey(at: path)
        do { return try pin(of: key.publicKey) } catch {
            throw ACMEFailure(.error, "cannot read the public key of \(path): \(error).")
        }
    }

    /// A certificate signing request from `key` for `domains` (the first is the common name), written 0644.
    public static func writeRequest(key: Certificate.PrivateKey, domains: [String], to path: String) throws(ACMEFailure) {
        do {
            let extensions = try Certificate.Extensions {
                SubjectAlternativeNames(domains.map { .dnsName($0) })
            }
            var attributes = CertificateSigningRequest.Attributes()
            attributes.insert(try CertificateSigningRequest.Attribute(ExtensionRequest(extensions: extensions)))
            let request = try CertificateSigningRequest(
                version: .v1, subject: try DistinguishedName { CommonName(domains[0]) }, privateKey: key, attributes: attributes
            )
            try AtomicFile.write(Array((try request.serializeAsPEM().pemString + "\n").utf8), to: path, mode: 0o644)
        } catch {
            throw ACMEFailure(.error, "could not write a certificate signing request for '\(domains.joined(separator: " "))' to \(path): \(error).")
        }
    }

    /// The certificates of the PEM files `paths` in order, leaf first; the PEM text to install.
    public static func chain(_ paths: [String]) throws(ACMEFailure) -> (certificates: [Certificate], pem: String) {
        var certificates: [Certificate] = []
        var pem = ""
        for path in paths {
            do {
                let found = try PinMaterial.certificates(fromFileContents: try AtomicFile.read(path, limit: 1024 * 1024), origin: path)
                certificates += found
                for certificate in found { pem += try certificate.serializeAsPEM().pemString + "\n" }
            } catch {
                throw ACMEFailure(.error, "\(path) holds no readable certificate (\(error)). Nothing was deployed.")
            }
        }
        guard !certificates.isEmpty else {
            throw ACMEFailure(.error, "\(paths.joined(separator: ", ")) holds no certificate. Nothing was deployed.")
        }
        return (certificates, pem)
    }

    /// The first certificate of the PEM file at `path`.
    public static func leaf(at path: String) throws(ACMEFailure) -> Certificate {
        try chain([path]).certificates[0]
    }

    /// Whether `certificate` names `host` among its DNS names (a wildcard covering one label).
    public static func certificate(_ certificate: Certificate, covers host: String) -> Bool {
        guard let names = try? certificate.extensions.subjectAlternativeNames else { return false }
        let host = host.lowercased()
        for case .dnsName(let name) in names {
            let name = name.lowercased()
            if name == host { return true }
            if name.hasPrefix("*."), let dot = host.firstIndex(of: "."), host[host.index(after: dot)...] == name.dropFirst(2) { return true }
        }
        return false
    }

    /// The serial number, in hex as openssl prints it.
    public static func serial(of certificate: Certificate) -> String {
        certificate.serialNumber.bytes.map { String(format: "%02X", $0) }.joined()
    }
}
