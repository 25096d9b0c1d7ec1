import Crypto

/// A private signing key in the encoding of Go's `golang.org/x/mod/sumdb/note`:
/// `PRIVATE+KEY+<key name>+<hex key ID>+<base64(signature type || 32-byte Ed25519 seed)>`.
///
/// The key ID is the one the matching ``NoteVerifierKey`` has, `SHA-256(name || 0x0A || type || public key)[:4]`,
/// so a key file and the vkey printed from it always agree. Type 0x01 keys sign notes (a log's checkpoints); type
/// 0x04 keys make cosignature/v1 signatures (a witness). Parsing checks every part and refuses a key whose stated
/// ID does not match its name, type and key, which catches a truncated, edited or mislabelled file; refusals carry
/// ``TransparencyError/Code/invalidConfiguration`` (a key file is configuration), or
/// ``TransparencyError/Code/unsupportedSignatureType``.
public struct NoteSignerKey: Sendable {
    static let prefix = "PRIVATE+KEY+"

    public let keyName: String
    public let signatureType: NoteVerifierKey.SignatureType
    private let privateKey: Curve25519.Signing.PrivateKey

    public init(keyName: String, signatureType: NoteVerifierKey.SignatureType, privateKey: Curve25519.Signing.PrivateKey) throws {
        _ = try NoteVerifierKey(
            keyName: keyName, signatureType: signatureType, publicKey: Array(privateKey.publicKey.rawRepresentation))
        self.keyName = keyName
        self.signatureType = signatureType
        self.privateKey = privateKey
    }

    /// A new random key.
    public static func generate(keyName: String, signatureType: NoteVerifierKey.SignatureType) throws -> NoteSignerKey {
        try NoteSignerKey(keyName: keyName, signatureType: signatureType, privateKey: Curve25519.Signing.PrivateKey())
    }

    public var verifierKey: NoteVerifierKey {
        // The name was validated in init and a Curve25519 public key is always 32 bytes.
        guard let key = try? NoteVerifierKey(
            keyName: keyName, signatureType: signatureType, publicKey: Array(privateKey.publicKey.rawRepresentation))
        else { preconditionFailure("validated in init") }
        return key
    }

    /// The key's text, without a final newline. It holds the private key: write it only to a file of mode 0600.
    public var encoded: String {
        Self.prefix + "\(keyName)+\(hex(verifierKey.keyID))+"
            + StrictBase64.encode([signatureType.rawValue] + Array(privateKey.rawRepresentation))
    }

    /// Parses the text of a key file; one final newline is allowed, nothing else around the key.
    public init(parsing text: String) throws {
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard line.hasPrefix(Self.prefix) else {
            throw TransparencyError(
                .invalidConfiguration, "A private note key starts with 'PRIVATE+KEY+'; this text does not.")
        }
        // Base64 may itself contain '+', so only the first two pluses after the prefix separate parts.
        let parts = line.dropFirst(Self.prefix.count).split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw TransparencyError(
                .invalidConfiguration, "A private note key is 'PRIVATE+KEY+<name>+<hex key ID>+<base64 key>'.")
        }
        let idText = parts[1]
        guard idText.utf8.count == 8,
              idText.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let claimedID = UInt32(idText, radix: 16)
        else {
            throw TransparencyError(.invalidConfiguration, "A private note key's ID is eight lowercase hex digits.")
        }
        guard let material = StrictBase64.decode(parts[2]), let typeByte = material.first else {
            throw TransparencyError(.invalidConfiguration, "A private note key's key material is canonical base64.")
        }
        guard let type = NoteVerifierKey.SignatureType(rawValue: typeByte) else {
            throw TransparencyError(
                .unsupportedSignatureType,
                "Signature type 0x\(String(typeByte, radix: 16)) is not Ed25519 (0x01) or an Ed25519 cosignature (0x04).")
        }
        guard material.count == 33,
              let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: material.dropFirst())
        else {
            throw TransparencyError(
                .invalidConfiguration, "A private note key holds a 32-byte Ed25519 seed after its type byte; this one holds \(material.count - 1) bytes.")
        }
        do {
            try self.init(keyName: String(parts[0]), signatureType: type, privateKey: key)
        } catch let error as TransparencyError {
            throw TransparencyError(.invalidConfiguration, error.reason)
        }
        guard verifierKey.keyID == claimedID else {
            throw TransparencyError(
                .invalidConfiguration,
                "The private note key claims ID \(idText) but its name and key hash to \(hex(verifierKey.keyID)).")
        }
    }

    /// The witness cosigner for a type 0x04 key.
    public func makeCosigner() throws -> Ed25519Cosigner {
        guard signatureType == .ed25519Cosignature else {
            throw TransparencyError(
                .unsupportedSignatureType, "'\(keyName)' is a note signing key (0x01), not a cosignature key (0x04).")
        }
        return try Ed25519Cosigner(keyName: keyName, privateKey: privateKey)
    }

    /// The note signer for a type 0x01 key.
    public func makeNoteSigner() throws -> Ed25519NoteSigner {
        guard signatureType == .ed25519 else {
            throw TransparencyError(
                .unsupportedSignatureType, "'\(keyName)' is a cosignature key (0x04), not a note signing key (0x01).")
        }
        return try Ed25519NoteSigner(keyName: keyName, privateKey: privateKey)
    }
}
