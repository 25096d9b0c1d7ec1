import PinsetTransparency

/// One witness a log asks to cosign its checkpoints (c2sp.org/tlog-witness `add-checkpoint`).
public protocol CheckpointWitness: Sendable {
    /// The witness's cosigning key (type 0x04): what it returns is verified with it before it is served.
    var key: NoteVerifierKey { get }
    /// Sends `request` and returns the witness's signature lines. Throws ``WitnessSizeConflict`` when the witness
    /// has cosigned another size than `request.oldSize` (HTTP 409), any other error when it refused or could not
    /// be reached. Gives up after a bounded time.
    func addCheckpoint(_ request: AddCheckpointRequest) throws -> [NoteSignature]
}

/// The witness last cosigned a tree of `latestSize` for this log, not the size the request assumed.
public struct WitnessSizeConflict: Error, Hashable, Sendable, CustomStringConvertible {
    public let latestSize: UInt64

    public init(latestSize: UInt64) {
        self.latestSize = latestSize
    }

    public var description: String { "the witness last cosigned a tree of \(latestSize) entries" }
}

/// The witnesses of a log and how many of them must cosign a checkpoint before content under it is served.
public struct WitnessQuorum: Sendable {
    public let witnesses: [any CheckpointWitness]
    public let quorum: Int

    public init(witnesses: [any CheckpointWitness], quorum: Int) throws {
        guard (0...witnesses.count).contains(quorum) else {
            throw LogPublishingError("The witness quorum must be between 0 and the \(witnesses.count) witnesses configured; got \(quorum).")
        }
        self.witnesses = witnesses
        self.quorum = quorum
    }
}
