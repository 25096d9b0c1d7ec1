import Crypto

/// The `cosignature/v1` message and encoding of c2sp.org/tlog-cosignature (Ed25519, signature type 0x04).
///
/// A cosigner signs `"cosignature/v1\n" || "time <timestamp>\n" || <checkpoint note text>`, and the signature line
/// carries `timestamp (big-endian u64) || Ed25519 signature (64 bytes)`. The statement is: as of `timestamp`, the
/// largest consistent tree the cosigner has seen for that origin has this root.
enum CosignatureV1 {
    static let header = "cosignature/v1\n"
    static let signatureByteCount = 8 + 64

    static func message(timestamp: UInt64, checkpointText: String) -> [UInt8] {
        Array((header + "time \(timestamp)\n" + checkpointText).utf8)
    }
}

/// A witness's Ed25519 cosigning key (cosignature/v1).
///
/// Each witness identity needs its own key: the v1 message does not commit to the cosigner's name. Immutable and
/// thread-safe; the private key never leaves it.
public struct Ed25519Cosigner: Sendable {
    public let keyName: String
    private let privateKey: Curve25519.Signing.PrivateKey

    public init(keyName: String, privateKey: Curve25519.Signing.PrivateKey) throws {
        _ = try Ed25519KeyMaterial.verifierKey(keyName: keyName, signatureType: .ed25519Cosignature, privateKey: privateKey)
        self.keyName = keyName
        self.privateKey = privateKey
    }

    public var verifierKey: NoteVerifierKey {
        Ed25519KeyMaterial.validatedVerifierKey(keyName: keyName, signatureType: .ed25519Cosignature, privateKey: privateKey)
    }

    /// The cosignature line over `checkpoint` at `timestamp` (POSIX seconds, 1…2^63-1; tlog-witness forbids 0).
    public func cosign(_ checkpoint: Checkpoint, timestamp: UInt64) throws -> NoteSignature {
        guard timestamp >= 1, timestamp <= UInt64(Int64.max) else {
            throw TransparencyError(.malformedCosignature, "A cosignature timestamp is between 1 and 2^63-1.")
        }
        let signature = try privateKey.signature(
            for: CosignatureV1.message(timestamp: timestamp, checkpointText: checkpoint.noteText))
        return try NoteSignature(
            keyName: keyName, keyID: verifierKey.keyID, signature: BigEndian.bytes(of: timestamp) + Array(signature))
    }
}

/// Verifies cosignature/v1 signatures from one witness key.
///
/// Only a checkpoint's note text can be cosigned: a text that does not parse as a checkpoint is refused before the
/// signature is checked. Timestamps above 2^63-1 are refused, as the specification requires.
public struct Ed25519CosignatureVerifier: NoteVerifier {
    public let keyName: String
    public let keyID: UInt32
    private let publicKey: Curve25519.Signing.PublicKey

    public var publicKeyBytes: [UInt8]? { Array(publicKey.rawRepresentation) }

    public init(_ key: NoteVerifierKey) throws {
        publicKey = try Ed25519KeyMaterial.publicKey(of: key, expected: .ed25519Cosignature, what: "an Ed25519 cosignature key")
        keyName = key.keyName
        keyID = key.keyID
    }

    public init(verifierKey: String) throws {
        try self.init(NoteVerifierKey(parsing: verifierKey))
    }

    public func check(signature: [UInt8], over noteText: String) -> NoteSignatureCheck {
        guard signature.count == CosignatureV1.signatureByteCount else {
            return .invalid(reason: "a cosignature is an 8-byte timestamp and a 64-byte signature")
        }
        let timestamp = BigEndian.uint64(signature[0..<8])
        guard timestamp <= UInt64(Int64.max) else {
            return .invalid(reason: "the cosignature's timestamp exceeds 2^63-1")
        }
        guard (try? Checkpoint(noteText: noteText)) != nil else {
            return .invalid(reason: "only a checkpoint can be cosigned")
        }
        let message = CosignatureV1.message(timestamp: timestamp, checkpointText: noteText)
        return publicKey.isValidSignature(Array(signature[8...]), for: message)
            ? .valid(timestamp: timestamp) : .invalid(reason: "the cosignature does not match the checkpoint")
    }
}
