/// Why a witness returned no cosignature. Callers branch on ``kind``; ``description`` is for people.
public struct WitnessClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// 409: the witness last cosigned `latestSize`, not the request's old size. Send the checkpoint again with
        /// `old latestSize` and a consistency proof from that size (or, if the log is smaller than that, stop: the
        /// witness has seen a larger tree of this log than the log now has).
        case conflict(latestSize: UInt64)
        /// Another refusal of tlog-witness: 400, 403 (the witness does not trust the log's key), 404 (it does not
        /// follow the origin), 413, 422 (the checkpoint does not extend what it cosigned), or any other status.
        case refused(status: Int)
        /// No answer: connection refused or reset, TLS failure, or no complete answer within the timeout.
        case unreachable
        /// An answer that is not what tlog-witness specifies (a 200 without signature lines, an oversized body, a 409
        /// without a size).
        case malformedResponse
    }

    public let kind: Kind
    public let witness: String
    public let message: String

    public init(_ kind: Kind, witness: String, _ message: String) {
        self.kind = kind
        self.witness = witness
        self.message = message
    }

    /// The size to send as `old` next time, when the witness answered 409.
    public var latestSize: UInt64? {
        if case .conflict(let size) = kind { return size }
        return nil
    }

    public var description: String { "Witness \(witness): \(message)" }
}
