/// Verifies signatures made by one key over a note's text.
///
/// A verifier is identified by its key name and key ID; a note's signature line is checked by the verifier with
/// the same name and ID, and by no other. Implementations must be safe to share between threads.
public protocol NoteVerifier: Sendable {
    var keyName: String { get }
    var keyID: UInt32 { get }
    /// The public key's own bytes, so that two names for one key are recognized as one key; nil only for a verifier
    /// that cannot say, which a policy then cannot check for a key listed twice.
    var publicKeyBytes: [UInt8]? { get }
    /// Checks `signature` (the bytes after the key ID) over `noteText` (the text including its final newline).
    func check(signature: [UInt8], over noteText: String) -> NoteSignatureCheck
}

/// What a verifier concluded about one signature.
public enum NoteSignatureCheck: Hashable, Sendable {
    /// The signature verifies; `timestamp` is the cosignature's POSIX time for timestamped types, else nil.
    case valid(timestamp: UInt64?)
    case invalid(reason: String)
}

/// A signature that a trusted key verified.
public struct VerifiedNoteSignature: Hashable, Sendable {
    public let keyName: String
    public let keyID: UInt32
    /// The POSIX time a timestamped cosignature states, nil for plain signatures.
    public let timestamp: UInt64?
}

/// A note whose text is signed by at least one trusted key. Only ``NoteVerifierSet/verify(_:)`` creates one.
public struct VerifiedNote: Hashable, Sendable {
    public let note: SignedNote
    /// The signatures that verified, one per trusted key even if the note repeats a line.
    public let verifiedSignatures: [VerifiedNoteSignature]
    /// Signatures from keys the verifier set does not know, left unchecked as the specification requires.
    public let unknownSignatures: [NoteSignature]

    public var text: String { note.text }

    /// Whether the key with this name and ID is among the verified signers.
    public func isSigned(byKeyName keyName: String, keyID: UInt32) -> Bool {
        verifiedSignatures.contains { $0.keyName.utf8.elementsEqual(keyName.utf8) && $0.keyID == keyID }
    }
}

/// The keys a party trusts for one purpose, and the signed-note verification rules of c2sp.org/signed-note.
///
/// Signatures from unknown keys are ignored (so logs can rotate keys and witnesses can add cosignatures), even when
/// they share a name or an ID, but not both, with a trusted key. A signature whose name and ID match a trusted key
/// must verify, or the whole note is refused; and a note with no verified signature from a trusted key is refused,
/// so a note carrying only unknown signatures never passes. Immutable and thread-safe.
public struct NoteVerifierSet: Sendable {
    public let verifiers: [any NoteVerifier]

    public init(_ verifiers: [any NoteVerifier]) throws {
        guard !verifiers.isEmpty else {
            throw TransparencyError(.invalidConfiguration, "A verifier set needs at least one trusted key.")
        }
        var identities = Set<KeyIdentity>()
        for verifier in verifiers {
            guard identities.insert(KeyIdentity(verifier)).inserted else {
                throw TransparencyError(
                    .ambiguousVerifiers,
                    "Two trusted keys are both named '\(verifier.keyName)' with key ID \(hex(verifier.keyID)).")
            }
        }
        self.verifiers = verifiers
    }

    /// Verifies a note against the trusted keys; throws unless at least one verifies and none fails.
    public func verify(_ note: SignedNote) throws -> VerifiedNote {
        var verified = [VerifiedNoteSignature]()
        var verifiedIdentities = Set<KeyIdentity>()
        var unknown = [NoteSignature]()
        for signature in note.signatures {
            guard let verifier = verifiers.first(where: {
                $0.keyName.utf8.elementsEqual(signature.keyName.utf8) && $0.keyID == signature.keyID
            }) else {
                unknown.append(signature)
                continue
            }
            switch verifier.check(signature: signature.signature, over: note.text) {
            case .valid(let timestamp):
                if verifiedIdentities.insert(KeyIdentity(verifier)).inserted {
                    verified.append(
                        VerifiedNoteSignature(keyName: signature.keyName, keyID: signature.keyID, timestamp: timestamp))
                }
            case .invalid(let reason):
                throw TransparencyError(
                    .signatureInvalid,
                    "The signature of trusted key '\(signature.keyName)' (\(hex(signature.keyID))) fails: \(reason)")
            }
        }
        guard !verified.isEmpty else {
            throw TransparencyError(.noTrustedSignature, "The note carries no valid signature from a trusted key.")
        }
        return VerifiedNote(note: note, verifiedSignatures: verified, unknownSignatures: unknown)
    }
}

struct KeyIdentity: Hashable {
    let keyName: String
    let keyID: UInt32

    init(_ verifier: any NoteVerifier) {
        keyName = verifier.keyName
        keyID = verifier.keyID
    }

    init(keyName: String, keyID: UInt32) {
        self.keyName = keyName
        self.keyID = keyID
    }
}

/// Eight lowercase hex digits, the key-ID spelling of verifier keys.
func hex(_ keyID: UInt32) -> String {
    let digits = String(keyID, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}
