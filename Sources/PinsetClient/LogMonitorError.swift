/// Why a run of `LogMonitor` stopped. The state file is never changed by a run that throws one.
///
/// Each kind is one thing an operator or auditor acts on differently, so each has its own exit status in
/// `pinset transparency monitor`. Raw values are stable: the command's JSON output carries them.
public struct LogMonitorError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The checkpoint, a tile or an entry bundle could not be fetched, or is not in the log's formats.
        case unreachable = "log-unreachable"
        /// The checkpoint is not signed by the log's key, is from another origin, or lacks the witness quorum.
        case untrustedCheckpoint = "untrusted-checkpoint"
        /// The checkpoint is smaller than the one verified before.
        case rollback = "checkpoint-rollback"
        /// The checkpoint contradicts the one verified before: same size with another root, or a larger tree
        /// that does not extend it. Evidence of a split view.
        case fork = "log-fork"
        /// The entry bundles are not the entries the checkpoint commits to.
        case entriesMismatch = "entries-mismatch"
        /// The state file cannot be read, is not a monitor's state for this log, or cannot be written.
        case stateFile = "state-file"
    }

    public let kind: Kind
    /// A sentence for people: what failed, with the sizes, roots or paths involved, and what to check.
    public let reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "\(kind.rawValue): \(reason)" }
}
