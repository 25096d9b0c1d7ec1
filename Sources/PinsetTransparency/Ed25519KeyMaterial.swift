import Crypto

/// What every Ed25519 signer, cosigner and verifier of this module does with its key: derive the verifier key
/// from a private key (validating the name once), and accept a verifier key only of the expected type.
enum Ed25519KeyMaterial {
    /// The verifier key of `privateKey` under `keyName`; throws if the name is not a valid key name.
    static func verifierKey(
        keyName: String, signatureType: NoteVerifierKey.SignatureType, privateKey: Curve25519.Signing.PrivateKey
    ) throws -> NoteVerifierKey {
        try NoteVerifierKey(keyName: keyName, signatureType: signatureType, publicKey: Array(privateKey.publicKey.rawRepresentation))
    }

    /// As above, for a name already validated when the holder was made; a Curve25519 public key is always 32
    /// bytes, so nothing else can fail.
    static func validatedVerifierKey(
        keyName: String, signatureType: NoteVerifierKey.SignatureType, privateKey: Curve25519.Signing.PrivateKey
    ) -> NoteVerifierKey {
        guard let key = try? verifierKey(keyName: keyName, signatureType: signatureType, privateKey: privateKey) else {
            preconditionFailure("the key name was validated when the key's holder was made")
        }
        return key
    }

    /// The public key of `key`, which must be of `expected` type (`what` names that type in the refusal).
    static func publicKey(of key: NoteVerifierKey, expected: NoteVerifierKey.SignatureType, what: String) throws -> Curve25519.Signing.PublicKey {
        guard key.signatureType == expected else {
            throw TransparencyError(
                .unsupportedSignatureType, "'\(key.keyName)' is not \(what) (0x0\(String(expected.rawValue, radix: 16))).")
        }
        do {
            return try Curve25519.Signing.PublicKey(rawRepresentation: key.publicKey)
        } catch {
            throw TransparencyError(.malformedVerifierKey, "'\(key.keyName)' is not a usable Ed25519 public key.")
        }
    }
}
