/// Why a TLS server was refused by `ServerTrustEvaluator`.
///
/// Equality looks at the code only.
public struct ServerTrustError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable {
        /// Normal validation failed: no chain to a trust root, a certificate outside its validity period, or a
        /// leaf not valid for the host name. Pins were not consulted.
        case chainValidation
        /// The chain is valid but the host is pinned and no certificate matches a pin, or the host is listed
        /// only by entries without pins (nothing can match; see `PinEvaluation.pinlessEntryRefused`).
        case pinMismatch
        /// The chain is valid but the host is not pinned and the policy refuses unpinned hosts.
        case unpinnedHostRefused
    }

    public let code: Code
    public let reason: String
    /// The pin verdict, when pins were consulted.
    public let evaluation: PinEvaluation?

    public init(_ code: Code, _ reason: String, evaluation: PinEvaluation? = nil) {
        self.code = code
        self.reason = reason
        self.evaluation = evaluation
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
