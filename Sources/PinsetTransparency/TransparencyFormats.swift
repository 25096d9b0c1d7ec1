/// PinsetTransparency: the cryptographic core of a transparency log of pin sets, following the C2SP
/// specifications. It has no storage, networking or clock; callers supply hashes, keys and time.
///
/// - Hashing, proofs and tree heads (RFC 6962 / RFC 9162 §2.1): ``TreeHasher``, ``InclusionProof``,
///   ``ConsistencyProof``, ``TreeHead``. Generation reads stored perfect-subtree hashes through
///   ``MerkleHashReader`` (or ``AsyncMerkleHashReader``), planned by ``MerkleHashPlan`` so any store can back it.
/// - c2sp.org/tlog-tiles: ``TileAddress`` (paths), ``TileLayout`` (which tiles a tree has, their bytes) and
///   ``EntryBundle``.
/// - c2sp.org/signed-note: ``SignedNote``, ``NoteVerifierKey`` (vkeys), ``NoteVerifierSet`` producing a
///   ``VerifiedNote``, ``Ed25519NoteSigner`` and ``Ed25519NoteVerifier``.
/// - c2sp.org/tlog-checkpoint: ``Checkpoint``; c2sp.org/tlog-cosignature (cosignature/v1): ``Ed25519Cosigner`` and
///   ``Ed25519CosignatureVerifier``.
/// - c2sp.org/tlog-witness: ``AddCheckpointRequest`` and ``WitnessCheckpointValidator`` (a witness's checks).
/// - c2sp.org/tlog-proof: ``TransparencyProof``, verified by ``TransparencyPolicy`` into a ``VerifiedInclusion``.
///
/// Every value type here is immutable and `Sendable`; nothing holds shared mutable state.
public enum TransparencyFormats {
    /// The media type tlog-tiles gives checkpoints.
    public static let checkpointContentType = "text/plain; charset=utf-8"
    /// The media type tlog-tiles gives tiles and entry bundles.
    public static let tileContentType = "application/octet-stream"
    /// The media type of a tlog-witness 409 body.
    public static let witnessConflictContentType = "text/x.tlog.size"
    /// The conventional file extension of tlog-proof documents.
    public static let proofFileExtension = "tlog-proof"
}
