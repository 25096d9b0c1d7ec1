import Crypto

/// Signs note text with an Ed25519 key (signed-note signature type 0x01), as a log signs its checkpoints.
///
/// The private key stays inside; the signer is immutable and safe to share between threads.
public struct Ed25519NoteSigner: Sendable {
    public let keyName: String
    private let privateKey: Curve25519.Signing.PrivateKey

    public init(keyName: String, privateKey: Curve25519.Signing.PrivateKey) throws {
        _ = try Ed25519KeyMaterial.verifierKey(keyName: keyName, signatureType: .ed25519, privateKey: privateKey)
        self.keyName = keyName
        self.privateKey = privateKey
    }

    public var verifierKey: NoteVerifierKey {
        Ed25519KeyMaterial.validatedVerifierKey(keyName: keyName, signatureType: .ed25519, privateKey: privateKey)
    }

    public var keyID: UInt32 { verifierKey.keyID }

    /// The signature line for `noteText`, which must be a valid note text (ending in a newline).
    public func sign(noteText: String) throws -> NoteSignature {
        try SignedNote.validateText(noteText)
        let signature = try privateKey.signature(for: Array(noteText.utf8))
        return try NoteSignature(keyName: keyName, keyID: keyID, signature: Array(signature))
    }

    /// A complete signed note carrying this key's signature.
    public func signedNote(text: String) throws -> SignedNote {
        try SignedNote(text: text, signatures: [sign(noteText: text)])
    }
}

/// Verifies Ed25519 note signatures (signature type 0x01) from one key.
public struct Ed25519NoteVerifier: NoteVerifier {
    public let keyName: String
    public let keyID: UInt32
    private let publicKey: Curve25519.Signing.PublicKey

    public var publicKeyBytes: [UInt8]? { Array(publicKey.rawRepresentation) }

    public init(_ key: NoteVerifierKey) throws {
        publicKey = try Ed25519KeyMaterial.publicKey(of: key, expected: .ed25519, what: "an Ed25519 note key")
        keyName = key.keyName
        keyID = key.keyID
    }

    public init(verifierKey: String) throws {
        try self.init(NoteVerifierKey(parsing: verifierKey))
    }

    public func check(signature: [UInt8], over noteText: String) -> NoteSignatureCheck {
        guard signature.count == 64 else {
            return .invalid(reason: "an Ed25519 signature is 64 bytes, not \(signature.count)")
        }
        return publicKey.isValidSignature(signature, for: Array(noteText.utf8))
            ? .valid(timestamp: nil) : .invalid(reason: "the Ed25519 signature does not match the text")
    }
}
