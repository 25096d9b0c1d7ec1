/// Why a witness refuses an `add-checkpoint` request, with the HTTP status tlog-witness assigns to it.
public struct WitnessRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// 400: the body is malformed, or the old size exceeds the checkpoint's size.
        case badRequest
        /// 403: no valid signature from a trusted log key, or a trusted key's signature fails.
        case forbidden
        /// 404: the checkpoint's origin is not a log this witness follows.
        case unknownLog
        /// 409: the old size is not the size the witness last cosigned (`latestSize`).
        case conflict(latestSize: UInt64)
        /// 422: the checkpoint is not consistent with the witness's latest one, or an empty tree has a wrong root.
        case inconsistent
    }

    public let kind: Kind
    public let reason: String

    public var httpStatus: Int {
        switch kind {
        case .badRequest: return 400
        case .forbidden: return 403
        case .unknownLog: return 404
        case .conflict: return 409
        case .inconsistent: return 422
        }
    }

    /// The 409 body (`<size>\n`, served as `text/x.tlog.size`), nil for the other refusals.
    public var conflictBody: String? {
        if case .conflict(let latestSize) = kind { return "\(latestSize)\n" }
        return nil
    }

    public var description: String { "\(httpStatus): \(reason)" }
}

/// The checks a witness makes before cosigning (c2sp.org/tlog-witness, `add-checkpoint`), without storage or I/O.
///
/// The caller holds the witness's record of the latest checkpoint it cosigned for the origin and must run
/// ``validate(_:latestCosigned:)`` and the update of that record atomically, as the specification requires, or two
/// concurrent requests could roll the record back. Immutable and thread-safe.
public struct WitnessCheckpointValidator: Sendable {
    private let logs: [String: NoteVerifierSet]

    /// `logs` maps each followed log's origin to its trusted keys.
    public init(logs: [String: [any NoteVerifier]]) throws {
        var sets = [String: NoteVerifierSet]()
        for (origin, keys) in logs {
            sets[origin] = try NoteVerifierSet(keys)
        }
        self.logs = sets
    }

    /// Returns the verified checkpoint to cosign and record, or throws the ``WitnessRefusal`` to answer with.
    ///
    /// `latestCosigned` is the tree head the witness last cosigned for this origin, nil if it never did.
    public func validate(_ request: AddCheckpointRequest, latestCosigned: TreeHead?) throws(WitnessRefusal) -> Checkpoint {
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint(noteText: request.checkpointNote.text)
        } catch {
            throw WitnessRefusal(kind: .badRequest, reason: "The checkpoint is malformed: \(error.reason)")
        }
        guard let verifiers = logs[checkpoint.origin] else {
            throw WitnessRefusal(kind: .unknownLog, reason: "This witness does not follow '\(checkpoint.origin)'.")
        }
        do {
            _ = try verifiers.verify(request.checkpointNote)
        } catch {
            throw WitnessRefusal(kind: .forbidden, reason: error.reason)
        }
        guard request.oldSize <= checkpoint.treeSize else {
            throw WitnessRefusal(
                kind: .badRequest, reason: "The old size \(request.oldSize) exceeds the checkpoint's \(checkpoint.treeSize).")
        }
        let latest = latestCosigned ?? TreeHead(size: 0, rootHash: TreeHasher.emptyTreeHash)
        guard request.oldSize == latest.size else {
            throw WitnessRefusal(
                kind: .conflict(latestSize: latest.size),
                reason: "The witness last cosigned size \(latest.size), not \(request.oldSize).")
        }
        guard checkpoint.treeSize > 0 || checkpoint.rootHash == TreeHasher.emptyTreeHash else {
            throw WitnessRefusal(kind: .inconsistent, reason: "A checkpoint of size 0 must have the empty tree's root.")
        }
        do {
            let proof = try ConsistencyProof(
                oldSize: latest.size, newSize: checkpoint.treeSize, path: request.consistencyProof)
            try proof.verify(oldRoot: latest.rootHash, newRoot: checkpoint.rootHash)
        } catch {
            throw WitnessRefusal(kind: .inconsistent, reason: error.reason)
        }
        return checkpoint
    }
}

extension Error {
    /// The reason of a ``TransparencyError``, or the error's description.
    fileprivate var reason: String {
        (self as? TransparencyError)?.reason ?? String(describing: self)
    }
}
