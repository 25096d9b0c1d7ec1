/// A transparency-log input or proof was refused.
///
/// Callers branch on ``code``, which is stable; ``reason`` is a sentence for people and may change. Two errors are
/// equal when their codes are equal, so tests and callers can match a refusal without depending on its wording.
public struct TransparencyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable identifier of a kind of refusal.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// An index, size or range argument is outside what the tree allows.
        public static let invalidArgument = Code("invalid-argument")
        /// A hash is not exactly 32 bytes, or its base64 is not canonical.
        public static let malformedHash = Code("malformed-hash")
        /// A hash reader answered with a different number of hashes than positions asked for.
        public static let hashReaderMismatch = Code("hash-reader-mismatch")
        /// An inclusion proof does not lead from the leaf to the tree's root hash.
        public static let inclusionProofFailed = Code("inclusion-proof-failed")
        /// A consistency proof does not connect the two tree heads.
        public static let consistencyProofFailed = Code("consistency-proof-failed")
        /// A tile path does not follow c2sp.org/tlog-tiles.
        public static let malformedTilePath = Code("malformed-tile-path")
        /// Tile contents are not a whole number of hashes of the expected width.
        public static let malformedTile = Code("malformed-tile")
        /// An entry bundle is truncated, has trailing bytes, or has the wrong number of entries.
        public static let malformedEntryBundle = Code("malformed-entry-bundle")
        /// A log entry is longer than the 65,535 bytes an entry bundle's length prefix can express.
        public static let entryTooLarge = Code("entry-too-large")
        /// A signed note breaks a rule of c2sp.org/signed-note.
        public static let malformedNote = Code("malformed-note")
        /// A signed note exceeds the size or signature-count limit.
        public static let noteTooLarge = Code("note-too-large")
        /// A verifier key is not `<name>+<hex key ID>+<base64(type || key)>` with a matching key ID.
        public static let malformedVerifierKey = Code("malformed-verifier-key")
        /// A verifier key names a signature type this module does not verify.
        public static let unsupportedSignatureType = Code("unsupported-signature-type")
        /// Two configured verifiers share both key name and key ID, so a signature could not be attributed.
        public static let ambiguousVerifiers = Code("ambiguous-verifiers")
        /// A signature from a known key failed to verify.
        public static let signatureInvalid = Code("signature-invalid")
        /// No signature from a trusted key verified.
        public static let noTrustedSignature = Code("no-trusted-signature")
        /// A checkpoint's note text breaks a rule of c2sp.org/tlog-checkpoint.
        public static let malformedCheckpoint = Code("malformed-checkpoint")
        /// A checkpoint's origin is not the one the verifier is configured for.
        public static let unexpectedOrigin = Code("unexpected-origin")
        /// A cosignature is not a timestamped Ed25519 signature, or its timestamp is out of range.
        public static let malformedCosignature = Code("malformed-cosignature")
        /// Fewer distinct witnesses cosigned the checkpoint than the policy requires.
        public static let witnessQuorumNotMet = Code("witness-quorum-not-met")
        /// A tlog-proof document breaks a rule of c2sp.org/tlog-proof.
        public static let malformedProof = Code("malformed-proof")
        /// An add-checkpoint request body breaks a rule of c2sp.org/tlog-witness.
        public static let malformedWitnessRequest = Code("malformed-witness-request")
        /// A policy or key configuration is unusable (for example, a quorum larger than the witness list).
        public static let invalidConfiguration = Code("invalid-configuration")
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: TransparencyError, rhs: TransparencyError) -> Bool {
        lhs.code == rhs.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }
}
