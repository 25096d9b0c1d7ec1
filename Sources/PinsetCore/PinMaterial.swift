import Foundation
import SwiftASN1
import X509

/// Turns certificates, public keys and hashes into pins.
///
/// The pin is the SHA-256 of the DER SubjectPublicKeyInfo. Note that `Certificate.PublicKey.subjectPublicKeyInfoBytes`
/// is only the BIT STRING payload, not the SPKI: the key is serialized whole here so the hash matches
/// `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256`.
public enum PinMaterial {
    /// A pin from a certificate (leaf, intermediate or root), with its key, certificate hash and expiry.
    public static func pin(for certificate: Certificate, source: PinSource, label: String? = nil) throws -> Pin {
        let spki = try subjectPublicKeyInfo(of: certificate.publicKey)
        return Pin(
            spkiSHA256: SHA256Fingerprint(of: spki),
            subjectPublicKeyInfo: spki,
            certificateSHA256: SHA256Fingerprint(of: try derBytes(of: certificate)),
            label: label ?? describe(certificate.subject),
            source: source,
            notAfter: certificate.notValidAfter
        )
    }

    /// A pin from a public key alone.
    public static func pin(for publicKey: Certificate.PublicKey, source: PinSource, label: String = "") throws -> Pin {
        let spki = try subjectPublicKeyInfo(of: publicKey)
        return Pin(spkiSHA256: SHA256Fingerprint(of: spki), subjectPublicKeyInfo: spki, label: label, source: source)
    }

    /// A pin known only by its hash (`pin-sha256` base64).
    public static func pin(base64SPKIHash: String, label: String = "") throws(InputError) -> Pin {
        Pin(spkiSHA256: try SHA256Fingerprint(base64: base64SPKIHash), label: label, source: PinSource(kind: .hash))
    }

    /// A pin known only by a certificate's SHA-256 (the legacy `fp`, hex): published in `fp`, with no key.
    public static func pin(certificateSHA256Hex hex: String, label: String = "") throws(InputError) -> Pin {
        Pin(spkiSHA256: nil, certificateSHA256: try SHA256Fingerprint(hex: hex), label: label, source: PinSource(kind: .certificateHash))
    }

    /// A pin from an inline base64 DER SubjectPublicKeyInfo (the legacy `pk` form).
    public static func pin(base64SubjectPublicKeyInfo text: String, source: PinSource, label: String = "") throws(InputError) -> Pin {
        guard let der = Base64.decode(text), Base64.encode(der) == text, (try? publicKey(fromSubjectPublicKeyInfo: der)) != nil else {
            if PrivateKeyMaterial.isPresent(in: text) { throw PrivateKeyMaterial.refusal(option: "A public key") }
            try explainNotASubjectPublicKeyInfo(text)
        }
        return Pin(spkiSHA256: SHA256Fingerprint(of: der), subjectPublicKeyInfo: der, label: label, source: source)
    }

    private static func explainNotASubjectPublicKeyInfo(_ text: String) throws(InputError) -> Never {
        guard let der = Base64.decode(text), Base64.encode(der) == text else {
            throw InputError("\(PrivateKeyMaterial.quoted(text)) is not standard padded base64 of a DER SubjectPublicKeyInfo (the 'pk' form).")
        }
        _ = try publicKey(fromSubjectPublicKeyInfo: der)
        throw InputError("\(PrivateKeyMaterial.quoted(text)) is not a DER SubjectPublicKeyInfo (the 'pk' form).")
    }

    public static func subjectPublicKeyInfo(of key: Certificate.PublicKey) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(key)
        return serializer.serializedBytes
    }

    public static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// Parses a DER SubjectPublicKeyInfo, validating that it is a key this library understands.
    public static func publicKey(fromSubjectPublicKeyInfo der: [UInt8]) throws(InputError) -> Certificate.PublicKey {
        do {
            return try Certificate.PublicKey(derEncoded: der)
        } catch {
            throw InputError("The bytes are not a DER SubjectPublicKeyInfo of a supported key type (RSA, P-256, P-384, P-521, Ed25519): \(Self.reason(error)).")
        }
    }

    /// All certificates in a PEM file (in order) or the single certificate of a DER file.
    ///
    /// - Parameter origin: how to name the input in error messages, e.g. its path.
    public static func certificates(fromFileContents bytes: [UInt8], origin: String) throws(InputError) -> [Certificate] {
        if let text = String(validatingUTF8Bytes: bytes), text.contains("-----BEGIN ") {
            let documents: [PEMDocument]
            do {
                documents = try PEMDocument.parseMultiple(pemString: text)
            } catch {
                throw InputError("\(origin) looks like PEM but could not be read: \(Self.reason(error)). Check that it is not truncated.")
            }
            let certificates = documents.filter { $0.discriminator == "CERTIFICATE" }
            guard !certificates.isEmpty else {
                let found = Set(documents.map(\.discriminator)).sorted().joined(separator: ", ")
                if found.contains("PRIVATE KEY") {
                    throw InputError("\(origin) holds a private key (\(found)), not a certificate. Give the certificate file; a private key is never needed here.")
                }
                throw InputError("\(origin) holds no certificate (found: \(found)). For a public key use 'pinset pin add --public-key'.")
            }
            do {
                return try certificates.map { try Certificate(pemDocument: $0) }
            } catch {
                throw InputError("\(origin) has a CERTIFICATE block that is not a valid X.509 certificate: \(Self.reason(error)).")
            }
        }
        do {
            return [try Certificate(derEncoded: bytes)]
        } catch {
            throw InputError("\(origin) is neither a PEM nor a DER X.509 certificate. Give a .pem/.crt/.cer/.der certificate file.")
        }
    }

    /// The public key of a PEM (`PUBLIC KEY`) or DER SubjectPublicKeyInfo file.
    public static func publicKey(fromFileContents bytes: [UInt8], origin: String) throws(InputError) -> Certificate.PublicKey {
        if let text = String(validatingUTF8Bytes: bytes), text.contains("-----BEGIN ") {
            let document: PEMDocument
            do {
                document = try PEMDocument(pemString: text)
            } catch {
                throw InputError("\(origin) looks like PEM but could not be read: \(Self.reason(error)). Give a single '-----BEGIN PUBLIC KEY-----' block.")
            }
            guard document.discriminator == "PUBLIC KEY" else {
                throw InputError("\(origin) holds a '\(document.discriminator)' block, not a 'PUBLIC KEY'. Extract the key with 'openssl pkey -pubout' or, for a certificate, use --certificate.")
            }
            do {
                return try Certificate.PublicKey(derEncoded: document.derBytes)
            } catch {
                throw InputError("\(origin) has a PUBLIC KEY block of an unsupported or malformed key: \(Self.reason(error)).")
            }
        }
        do {
            return try Certificate.PublicKey(derEncoded: bytes)
        } catch {
            throw InputError("\(origin) is neither a PEM public key nor a DER SubjectPublicKeyInfo.")
        }
    }

    /// The public key of a PEM (`CERTIFICATE REQUEST`) or DER PKCS #10 certificate signing request: the key a
    /// certificate issued for it will carry. The request's own signature must verify with that key, so a request
    /// edited or made for someone else's key is refused.
    public static func publicKey(fromCertificateRequestContents bytes: [UInt8], origin: String) throws(InputError) -> Certificate.PublicKey {
        var der = bytes
        if let text = String(validatingUTF8Bytes: bytes), text.contains("-----BEGIN ") {
            let document: PEMDocument
            do {
                document = try PEMDocument(pemString: text)
            } catch {
                throw InputError("\(origin) looks like PEM but could not be read: \(Self.reason(error)). Give a single '-----BEGIN CERTIFICATE REQUEST-----' block.")
            }
            guard document.discriminator == "CERTIFICATE REQUEST" || document.discriminator == "NEW CERTIFICATE REQUEST" else {
                throw InputError("\(origin) holds a '\(document.discriminator)' block, not a 'CERTIFICATE REQUEST'. Make one with 'openssl req -new -key KEY -subj /CN=HOST'.")
            }
            der = document.derBytes
        }
        let request: CertificateSigningRequest
        do {
            request = try CertificateSigningRequest(derEncoded: der)
        } catch {
            throw InputError("\(origin) is neither a PEM nor a DER certificate signing request (PKCS #10): \(Self.reason(error)).")
        }
        guard request.publicKey.isValidSignature(request.signature, for: request) else {
            throw InputError("\(origin): the request's signature does not verify with the key it names, so it was not made with that key's private key. Make the request again from the key the next certificate will use.")
        }
        return request.publicKey
    }

    /// A short human label for a certificate: its common name, else the whole subject.
    public static func describe(_ name: DistinguishedName) -> String {
        for rdn in name {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                let text = String(describing: attribute.value)
                if !text.isEmpty { return text }
            }
        }
        return String(describing: name)
    }
}

extension PinMaterial {
    /// Why parsing failed, in words: a parser's error without its source file and line, which mean nothing to an admin.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? ASN1Error else { return "\(error)" }
        switch error.code {
        case .truncatedASN1Field: return "the data ends early (truncated or cut off)"
        case .invalidASN1Object, .invalidASN1IntegerEncoding, .unsupportedFieldLength: return "the DER encoding is malformed"
        case .unexpectedFieldType: return "a field is not of the type expected there"
        default: return "the DER encoding could not be read (\(error.code))"
        }
    }
}

extension String {
    /// `bytes` as text when they are valid UTF-8, else nil: `String(validating:as:)`, which needs macOS 15 and
    /// iOS 18, for the macOS 14 and iOS 17 the package supports.
    public init?(validatingUTF8Bytes bytes: some Collection<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.elementsEqual(bytes) else { return nil }
        self = text
    }
}
