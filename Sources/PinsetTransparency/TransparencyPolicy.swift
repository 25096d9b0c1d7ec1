/// What a verifier trusts: one log (its origin and keys) and a set of witnesses with a quorum.
///
/// A checkpoint is accepted only if its origin is the log's, a log key signed it, every signature from a trusted
/// key verifies, and at least ``quorum`` distinct witness keys cosigned it. A witness cosignature cannot stand in
/// for the log's signature or the reverse: the two key lists are checked separately. Immutable and thread-safe.
public struct TransparencyPolicy: Sendable {
    public let origin: String
    public let logKeys: [any NoteVerifier]
    public let witnessKeys: [any NoteVerifier]
    /// How many distinct witness keys must cosign; 0 accepts the log's signature alone.
    public let quorum: Int

    private let logVerifiers: NoteVerifierSet
    private let allVerifiers: NoteVerifierSet

    public init(
        origin: String, logKeys: [any NoteVerifier], witnessKeys: [any NoteVerifier] = [], quorum: Int = 0
    ) throws {
        guard !origin.isEmpty else {
            throw TransparencyError(.invalidConfiguration, "A transparency policy names the log's origin.")
        }
        guard !logKeys.isEmpty else {
            throw TransparencyError(.invalidConfiguration, "A transparency policy needs at least one log key.")
        }
        guard (0...witnessKeys.count).contains(quorum) else {
            throw TransparencyError(
                .invalidConfiguration,
                "The witness quorum must be between 0 and the \(witnessKeys.count) configured witnesses; got \(quorum).")
        }
        self.origin = origin
        self.logKeys = logKeys
        self.witnessKeys = witnessKeys
        self.quorum = quorum
        logVerifiers = try NoteVerifierSet(logKeys)
        // One set over both lists refuses a log key and a witness key with the same name and ID.
        allVerifiers = try NoteVerifierSet(logKeys + witnessKeys)
        // Past the names and IDs the sets check: a cosignature does not sign the witness's name, so one key listed
        // under two names would count twice towards the quorum, and a log key listed as a witness would cosign for
        // itself.
        var seen: Set<[UInt8]> = []
        for key in logKeys + witnessKeys {
            guard let bytes = key.publicKeyBytes, !seen.insert(bytes).inserted else { continue }
            throw TransparencyError(
                .invalidConfiguration,
                "The key named '\(key.keyName)' is listed twice (under another name, or as both the log's and a witness's): each witness key counts once towards the quorum, and the log cannot witness itself.")
        }
    }

    /// Verifies a signed checkpoint against the policy.
    public func verify(checkpoint note: SignedNote) throws -> VerifiedCheckpoint {
        let checkpoint = try Checkpoint(noteText: note.text)
        guard checkpoint.origin == origin else {
            throw TransparencyError(
                .unexpectedOrigin, "The checkpoint is from '\(checkpoint.origin)', not the trusted log '\(origin)'.")
        }
        let verified = try allVerifiers.verify(note)
        let logIdentities = Set(logVerifiers.verifiers.map(KeyIdentity.init))
        guard let logSignature = verified.verifiedSignatures.first(where: {
            logIdentities.contains(KeyIdentity(keyName: $0.keyName, keyID: $0.keyID))
        }) else {
            throw TransparencyError(.noTrustedSignature, "The checkpoint carries no valid signature from the log's key.")
        }
        let cosignatures = verified.verifiedSignatures.filter {
            !logIdentities.contains(KeyIdentity(keyName: $0.keyName, keyID: $0.keyID))
        }
        guard cosignatures.count >= quorum else {
            throw TransparencyError(
                .witnessQuorumNotMet,
                "The checkpoint has \(cosignatures.count) valid witness cosignatures; the policy requires \(quorum).")
        }
        return VerifiedCheckpoint(
            checkpoint: checkpoint, note: note, logSignature: logSignature, witnessCosignatures: cosignatures)
    }

    /// Verifies an offline proof that `entry` is in the log (the tlog-proof verification steps 1–4).
    ///
    /// `entry` is the leaf's data as the verifier reconstructs it from what it already trusts, never taken from
    /// the proof: that is what makes the proof bind the verifier's own view of the entry to the log.
    public func verify(_ proof: TransparencyProof, entry: some Collection<UInt8>) throws -> VerifiedInclusion {
        let leafHash = TreeHasher.leafHash(ofEntry: entry)
        let checkpoint = try verify(checkpoint: proof.checkpointNote)
        guard proof.leafIndex < checkpoint.checkpoint.treeSize else {
            throw TransparencyError(
                .inclusionProofFailed,
                "Entry \(proof.leafIndex) is not inside the checkpoint's tree of \(checkpoint.checkpoint.treeSize).")
        }
        let inclusion = try InclusionProof(
            leafIndex: proof.leafIndex, treeSize: checkpoint.checkpoint.treeSize, path: proof.inclusionPath)
        try inclusion.verify(leafHash: leafHash, rootHash: checkpoint.checkpoint.rootHash)
        return VerifiedInclusion(leafIndex: proof.leafIndex, leafHash: leafHash, checkpoint: checkpoint)
    }
}

/// An entry proven to be in a log under a checkpoint the policy accepted. Only ``TransparencyPolicy`` creates one.
public struct VerifiedInclusion: Hashable, Sendable {
    public let leafIndex: UInt64
    public let leafHash: MerkleHash
    public let checkpoint: VerifiedCheckpoint
}
