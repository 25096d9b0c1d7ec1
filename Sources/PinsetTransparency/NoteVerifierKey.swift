import Crypto

/// A verifier key ("vkey", c2sp.org/signed-note): `<key name>+<hex key ID>+<base64(signature type || public key)>`.
///
/// Parsing checks every part: a valid key name, exactly eight lowercase hex digits, canonical base64, a known
/// signature type with a key of the right length, and a key ID equal to the one derived from name, type and key,
/// so a vkey cannot claim an ID it does not hash to.
public struct NoteVerifierKey: Hashable, Sendable, CustomStringConvertible {
    /// Signature type bytes assigned by c2sp.org/signed-note that this module verifies.
    public enum SignatureType: UInt8, Hashable, Sendable {
        /// Ed25519 over the note text.
        case ed25519 = 0x01
        /// Timestamped Ed25519 checkpoint cosignature (c2sp.org/tlog-cosignature, cosignature/v1).
        case ed25519Cosignature = 0x04
    }

    public let keyName: String
    public let signatureType: SignatureType
    /// The 32-byte Ed25519 public key (RFC 8032 encoding).
    public let publicKey: [UInt8]

    public init(keyName: String, signatureType: SignatureType, publicKey: [UInt8]) throws {
        do {
            try SignedNote.validateKeyName(keyName)
        } catch let error as TransparencyError {
            throw TransparencyError(.malformedVerifierKey, error.reason)
        }
        guard publicKey.count == 32 else {
            throw TransparencyError(.malformedVerifierKey, "An Ed25519 public key is 32 bytes; got \(publicKey.count).")
        }
        self.keyName = keyName
        self.signatureType = signatureType
        self.publicKey = publicKey
    }

    /// `SHA-256(key name || 0x0A || signature type || public key)[:4]`, big-endian.
    public var keyID: UInt32 {
        Self.keyID(keyName: keyName, signatureType: signatureType.rawValue, publicKey: publicKey)
    }

    static func keyID(keyName: String, signatureType: UInt8, publicKey: [UInt8]) -> UInt32 {
        var hasher = SHA256()
        hasher.update(data: Array(keyName.utf8) + [0x0A, signatureType] + publicKey)
        return BigEndian.uint32(Array(hasher.finalize())[0..<4])
    }

    /// The vkey text.
    public var encoded: String {
        "\(keyName)+\(hex(keyID))+\(StrictBase64.encode([signatureType.rawValue] + publicKey))"
    }

    public var description: String { encoded }

    public init(parsing text: String) throws {
        // Base64 may itself contain '+', so only the first two pluses separate parts.
        let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw TransparencyError(
                .malformedVerifierKey, "A verifier key is '<name>+<hex key ID>+<base64 key>'; '\(text)' is not.")
        }
        let idText = parts[1]
        guard idText.utf8.count == 8,
              idText.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let claimedID = UInt32(idText, radix: 16)
        else {
            throw TransparencyError(.malformedVerifierKey, "A verifier key's ID is eight lowercase hex digits.")
        }
        guard let material = StrictBase64.decode(parts[2]), let typeByte = material.first else {
            throw TransparencyError(.malformedVerifierKey, "A verifier key's key material is canonical base64.")
        }
        guard let type = SignatureType(rawValue: typeByte) else {
            throw TransparencyError(
                .unsupportedSignatureType,
                "Signature type 0x\(String(typeByte, radix: 16)) is not Ed25519 (0x01) or an Ed25519 cosignature (0x04).")
        }
        try self.init(keyName: String(parts[0]), signatureType: type, publicKey: Array(material.dropFirst()))
        guard keyID == claimedID else {
            throw TransparencyError(
                .malformedVerifierKey, "The verifier key claims ID \(idText) but its name and key hash to \(hex(keyID)).")
        }
    }

    /// The verifier for this key: an ``Ed25519NoteVerifier`` or an ``Ed25519CosignatureVerifier``.
    public func makeVerifier() throws -> any NoteVerifier {
        switch signatureType {
        case .ed25519: return try Ed25519NoteVerifier(self)
        case .ed25519Cosignature: return try Ed25519CosignatureVerifier(self)
        }
    }
}
