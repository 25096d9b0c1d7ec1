/// Which transparency check refused a downloaded pin set (`PinUpdateError.Code.transparency`).
///
/// Each case is one thing that failed and points at what the operator checks. Raw values are stable: the
/// `pinset client` JSON output and exit statuses are derived from them.
public enum TransparencyRefusal: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The proof could not be fetched: transport error, a status other than 200 (404: the server serves no
    /// proof — is its log enabled?), or a body over `ClientTransparencyPolicy.maximumProofSize`.
    case proofUnavailable = "proof-unavailable"
    /// The proof is not a c2sp.org/tlog-proof@v1 document, or its checkpoint is not a signed checkpoint.
    case malformedProof = "malformed-proof"
    /// The checkpoint is not from the configured log: another origin, no valid signature from a configured log
    /// key, or a configured key's signature that fails. Check the app's log origin and keys against the server's.
    case untrustedCheckpoint = "untrusted-checkpoint"
    /// Fewer configured witnesses cosigned the checkpoint than the quorum: are the witnesses reachable by the log?
    case witnessQuorumNotMet = "witness-quorum-not-met"
    /// The proof does not show this bundle's content (customer, version, pins) in the log: the bundle was signed
    /// but never published, which is what a leaked signer key looks like. Investigate before anything else.
    case entryNotInLog = "entry-not-in-log"
    /// The checkpoint is smaller than one this client verified before: the log, or whoever answers for it,
    /// went back in time.
    case checkpointRollback = "checkpoint-rollback"
    /// The checkpoint contradicts the one this client verified before (same size with another root, or a larger
    /// tree that does not extend it): the log shows different histories to different clients (a split view).
    case logFork = "log-fork"
    /// The hash tiles that prove the new checkpoint extends the one held could not be fetched or are malformed.
    case tilesUnavailable = "tiles-unavailable"

    public var description: String { rawValue }
}
