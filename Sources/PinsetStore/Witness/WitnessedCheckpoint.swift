import PinsetTransparency

/// The latest checkpoint a witness cosigned for one log: what the next `add-checkpoint` request for that origin must
/// extend (c2sp.org/tlog-witness keeps exactly this per log).
public struct WitnessedCheckpoint: Hashable, Sendable {
    public let origin: String
    public let treeHead: TreeHead
    /// The checkpoint's note text as cosigned, extension lines included.
    public let noteText: String
    /// The POSIX time of the cosignature the witness made over it.
    public let cosignedAt: UInt64

    public init(origin: String, treeHead: TreeHead, noteText: String, cosignedAt: UInt64) {
        self.origin = origin
        self.treeHead = treeHead
        self.noteText = noteText
        self.cosignedAt = cosignedAt
    }
}
