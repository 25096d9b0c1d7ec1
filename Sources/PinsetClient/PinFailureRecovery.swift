/// What ``PinsetUpdater/recoverAfterPinFailure(host:)`` did after a refused connection, and whether the caller
/// should try again.
///
/// Only ``retryWithNewPins(version:)`` allows a retry, once, on a new connection (a new `URLSession` on Apple
/// platforms, where connections and TLS sessions are reused without a new evaluation). Every other outcome
/// means the refusal stands: fail the request as before.
public enum PinFailureRecovery: Hashable, Sendable, CustomStringConvertible {
    /// The pins now in force (content version `version`) accept the chain that was refused: a forced update
    /// brought them, or an update since the failure already had. Retry once, on a new connection.
    case retryWithNewPins(version: Int64)
    /// The trust server was asked and the pins in force still refuse that chain: nothing newer was published,
    /// or the newer pins do not cover the key presented (a man-in-the-middle, or a rotation not yet published).
    case pinsStillRefuse
    /// No update was made: this host, or the app as a whole, forced one too recently. `retryAfter` is when the
    /// next one would be allowed; the periodic `update()` is not affected.
    case throttled(retryAfter: Duration)
    /// The forced update was refused (network, signature, freshness, rollback, revocation floor…); the pins
    /// held are unchanged.
    case updateFailed(PinUpdateError)
    /// This updater's evaluator refused no chain for the host lately: the failure was not a pin refusal (a
    /// chain validation or network error) or was decided by another evaluator. Nothing was fetched.
    case noRecordedFailure

    /// Whether the caller should retry the connection, once.
    public var allowsRetry: Bool {
        if case .retryWithNewPins = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .retryWithNewPins(let version): "retry on a new connection: the pins now in force (version \(version)) accept the chain"
        case .pinsStillRefuse: "the pins in force still refuse the chain"
        case .throttled(let retryAfter): "throttled: the next forced update is allowed in \(retryAfter)"
        case .updateFailed(let error): "the forced update failed (\(error.code)): \(error.reason)"
        case .noRecordedFailure: "no pin refusal was recorded for the host"
        }
    }
}
