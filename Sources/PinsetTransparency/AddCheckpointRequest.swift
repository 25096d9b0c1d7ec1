/// The body of a c2sp.org/tlog-witness `add-checkpoint` request: the size the log believes the witness last
/// cosigned, a consistency proof from that size, and the new signed checkpoint.
///
/// ```
/// old <size>
/// <base64 consistency-proof hash>   (zero to 63 lines)
///
/// <checkpoint note>
/// ```
public struct AddCheckpointRequest: Hashable, Sendable {
    public let oldSize: UInt64
    public let consistencyProof: [MerkleHash]
    public let checkpointNote: SignedNote

    public init(oldSize: UInt64, consistencyProof: [MerkleHash], checkpointNote: SignedNote) throws {
        guard oldSize <= UInt64(Int64.max) else {
            throw TransparencyError(.malformedWitnessRequest, "The old size is at most 2^63-1.")
        }
        guard consistencyProof.count <= ConsistencyProof.maximumPathLength else {
            throw TransparencyError(.malformedWitnessRequest, "A client sends at most 63 consistency proof lines.")
        }
        self.oldSize = oldSize
        self.consistencyProof = consistencyProof
        self.checkpointNote = checkpointNote
    }

    public var encoded: String {
        "old \(oldSize)\n" + consistencyProof.map { $0.base64 + "\n" }.joined() + "\n" + checkpointNote.encoded
    }

    public init(parsing body: String, limits: SignedNote.Limits = .init()) throws {
        guard body.utf8.count <= limits.maximumSize else {
            throw TransparencyError(.noteTooLarge, "The request body exceeds \(limits.maximumSize) bytes.")
        }
        var lines = LineReader(body, errorCode: .malformedWitnessRequest)
        let oldLine = try lines.next()
        guard oldLine.hasPrefix("old "), let oldSize = StrictDecimal.parse(oldLine.dropFirst("old ".count)) else {
            throw TransparencyError(
                .malformedWitnessRequest, "The first line is 'old ' and a decimal size without leading zeroes.")
        }
        var proof = [MerkleHash]()
        while true {
            let line = try lines.next()
            if line.isEmpty { break }
            guard proof.count < ConsistencyProof.maximumPathLength else {
                throw TransparencyError(.malformedWitnessRequest, "A client sends at most 63 consistency proof lines.")
            }
            do {
                proof.append(try MerkleHash(base64: line))
            } catch {
                throw TransparencyError(
                    .malformedWitnessRequest, "Consistency proof line \(proof.count + 1) is not a base64 hash.")
            }
        }
        let note: SignedNote
        do {
            note = try SignedNote(parsing: String(lines.remainder), limits: limits)
        } catch let error as TransparencyError {
            throw TransparencyError(.malformedWitnessRequest, "The request's checkpoint: \(error.reason)")
        }
        try self.init(oldSize: oldSize, consistencyProof: proof, checkpointNote: note)
    }
}
