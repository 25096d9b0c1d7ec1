/// What to do with a TLS server whose chain the platform has evaluated (Security.framework on Apple platforms):
/// the whole decision the Apple adapters apply, here, in code that takes bytes and is tested on every platform.
/// The adapters only translate `SecTrust` into DER and this decision into a URLSession disposition or a
/// Network.framework verdict.
public enum PlatformTrustDecision: Hashable, Sendable, CustomStringConvertible {
    /// The system trusts the chain for the host and a pin matched: use the server's credential.
    case trust(PinEvaluation)
    /// The host is not pinned and the unpinned-host policy allows it: let the system decide, as without pinning
    /// (URLSession's default handling; for Network.framework, the system evaluation that already passed).
    case defaultHandling(PinEvaluation)
    /// Refuse the connection: the system evaluation failed, there is no chain, no pin matched, the host is listed
    /// without pins, or the policy refuses unpinned hosts. The reason is for logs.
    case refuse(reason: String, evaluation: PinEvaluation?)

    /// Whether the connection may proceed.
    public var allowsConnection: Bool {
        switch self {
        case .trust, .defaultHandling: true
        case .refuse: false
        }
    }

    public var description: String {
        switch self {
        case .trust(let evaluation): "trust: \(evaluation)"
        case .defaultHandling(let evaluation): "default handling: \(evaluation)"
        case .refuse(let reason, _): "refuse: \(reason)"
        }
    }
}

extension PinEvaluator {
    /// Decides on a connection to `host` after the platform's own evaluation, which always comes first: pins
    /// narrow what the system trusts and never widen it.
    ///
    /// - Parameters:
    ///   - systemEvaluation: the chain the system validated for `host` (DER, leaf first), or why it did not.
    ///     Only a validated chain is checked against the pins: a peer may append any public certificate to what
    ///     it sends, and a pinned intermediate must only match one that really issued the leaf.
    /// - Returns: `.refuse` on a system failure or an empty chain whatever the pins, else the pins' verdict. A
    ///   mismatch is reported like any other (the updater's reporter, when configured).
    public func decide(host: String, systemEvaluation: Result<[[UInt8]], PlatformTrustError>) -> PlatformTrustDecision {
        let chain: [[UInt8]]
        switch systemEvaluation {
        case .failure(let error): return .refuse(reason: "the system did not trust the server: \(error.reason)", evaluation: nil)
        case .success(let validated): chain = validated
        }
        guard !chain.isEmpty else {
            return .refuse(reason: "the system evaluation returned no certificate chain", evaluation: nil)
        }
        let evaluation = evaluate(host: host, chain: chain)
        switch evaluation {
        case .pinnedMatch, .reportOnlyMismatch: return .trust(evaluation)
        case .notPinned: return .defaultHandling(evaluation)
        case .pinMismatch, .pinlessEntryRefused, .unpinnedHostRefused: return .refuse(reason: evaluation.description, evaluation: evaluation)
        }
    }
}

/// Why the platform's evaluation did not produce a trusted chain.
public struct PlatformTrustError: Error, Hashable, Sendable {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }
}
