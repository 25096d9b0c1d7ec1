import Crypto

/// A note signing key in the text form of Go's `golang.org/x/mod/sumdb/note` (`note.NewSigner`, `note.GenerateKey`):
/// `PRIVATE+KEY+<key name>+<hex key ID>+<base64(signature type || 32-byte Ed25519 seed)>`.
///
/// The same file then works with Pinset and with Go tooling, and its public half is the ``NoteVerifierKey`` derived
/// from it. Parsing checks the prefix, the name, the signature type, the seed length and that the key ID is the
/// one the name and public key hash to, so a damaged or hand-edited key is refused before it signs anything. The
/// text is secret: ``description`` never shows it.
public struct NotePrivateKey: Sendable, CustomStringConvertible {
    static let prefix = "PRIVATE+KEY+"

    public let keyName: String
    public let signatureType: NoteVerifierKey.SignatureType
    private let privateKey: Curve25519.Signing.PrivateKey

    /// A new random key.
    public init(generatingFor keyName: String, signatureType: NoteVerifierKey.SignatureType) throws {
        try self.init(keyName: keyName, signatureType: signatureType, privateKey: Curve25519.Signing.PrivateKey())
    }

    init(keyName: String, signatureType: NoteVerifierKey.SignatureType, privateKey: Curve25519.Signing.PrivateKey) throws {
        _ = try Ed25519KeyMaterial.verifierKey(keyName: keyName, signatureType: signatureType, privateKey: privateKey)
        self.keyName = keyName
        self.signatureType = signatureType
        self.privateKey = privateKey
    }

    public init(parsing text: String) throws {
        let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard trimmed.hasPrefix(Self.prefix) else {
            throw TransparencyError(
                .malformedVerifierKey, "A note private key starts with '\(Self.prefix)' (the format of Go's sumdb/note).")
        }
        let parts = trimmed.dropFirst(Self.prefix.count).split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let material = StrictBase64.decode(parts[2]), let typeByte = material.first else {
            throw TransparencyError(
                .malformedVerifierKey, "A note private key is 'PRIVATE+KEY+<name>+<hex key ID>+<base64 key>'.")
        }
        guard let type = NoteVerifierKey.SignatureType(rawValue: typeByte) else {
            throw TransparencyError(
                .unsupportedSignatureType,
                "Signature type 0x\(String(typeByte, radix: 16)) is not Ed25519 (0x01) or an Ed25519 cosignature (0x04).")
        }
        let seed = material.dropFirst()
        let key: Curve25519.Signing.PrivateKey
        do {
            guard seed.count == 32 else { throw TransparencyError(.malformedVerifierKey, "") }
            key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        } catch {
            throw TransparencyError(.malformedVerifierKey, "A note private key holds a 32-byte Ed25519 seed; got \(seed.count) bytes.")
        }
        try self.init(keyName: String(parts[0]), signatureType: type, privateKey: key)
        guard parts[1] == Substring(hex(verifierKey.keyID)) else {
            throw TransparencyError(
                .malformedVerifierKey,
                "The private key claims ID \(parts[1]) but its name and key hash to \(hex(verifierKey.keyID)); the file is damaged.")
        }
    }

    /// The secret text, as Go writes it; store it only in a file readable by its owner alone.
    public var encoded: String {
        "\(Self.prefix)\(keyName)+\(hex(verifierKey.keyID))+\(StrictBase64.encode([signatureType.rawValue] + Array(privateKey.rawRepresentation)))"
    }

    /// The public half, shared with verifiers.
    public var verifierKey: NoteVerifierKey {
        Ed25519KeyMaterial.validatedVerifierKey(keyName: keyName, signatureType: signatureType, privateKey: privateKey)
    }

    /// A checkpoint signer; the key must be an Ed25519 note key (0x01).
    public func makeNoteSigner() throws -> Ed25519NoteSigner {
        guard signatureType == .ed25519 else {
            throw TransparencyError(.unsupportedSignatureType, "'\(keyName)' is a cosignature key (0x04), not a log's Ed25519 note key (0x01).")
        }
        return try Ed25519NoteSigner(keyName: keyName, privateKey: privateKey)
    }

    /// A witness cosigner; the key must be an Ed25519 cosignature key (0x04).
    public func makeCosigner() throws -> Ed25519Cosigner {
        guard signatureType == .ed25519Cosignature else {
            throw TransparencyError(.unsupportedSignatureType, "'\(keyName)' is a log's Ed25519 note key (0x01), not a cosignature key (0x04).")
        }
        return try Ed25519Cosigner(keyName: keyName, privateKey: privateKey)
    }

    public var description: String { "note private key for \(verifierKey.encoded)" }
}
