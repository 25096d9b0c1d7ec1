import PinsetCore

/// How often a pin failure may force a bundle update (``PinsetUpdater/recoverAfterPinFailure(host:)``).
///
/// A pin failure is what a man-in-the-middle causes at will, on every connection and for every host the app
/// talks to: were each failure allowed a download, an attacker could turn the app into a client that hammers the
/// trust server. So a failure forces at most one update per host per ``perHostInterval`` and at most
/// ``maximumForcedUpdatesPerInterval`` for all hosts together in any such interval; the bounds below keep both
/// finite whatever the app configures.
public struct PinFailureRecoveryPolicy: Hashable, Sendable {
    /// The shortest ``perHostInterval`` accepted.
    public static let minimumInterval: Duration = .seconds(10)
    /// The highest ``maximumForcedUpdatesPerInterval`` accepted.
    public static let maximumUpdatesCap = 10

    /// `Duration`, default 60 s, at least 10 s — at most one forced update per host in this interval; also the
    /// window of the global cap.
    public let perHostInterval: Duration
    /// `Int`, default 3, 1 to 10 — forced updates for all hosts together in any `perHostInterval`.
    public let maximumForcedUpdatesPerInterval: Int

    /// - Throws: `InputError` naming the setting when `perHostInterval` is under 10 s or
    ///   `maximumForcedUpdatesPerInterval` is outside 1...10.
    public init(perHostInterval: Duration = .seconds(60), maximumForcedUpdatesPerInterval: Int = 3) throws(InputError) {
        guard perHostInterval >= Self.minimumInterval else {
            throw InputError("pinFailureRecovery: perHostInterval must be at least \(Self.minimumInterval), so that pin failures a man-in-the-middle causes cannot make the app hammer the trust server; got \(perHostInterval).")
        }
        guard (1...Self.maximumUpdatesCap).contains(maximumForcedUpdatesPerInterval) else {
            throw InputError("pinFailureRecovery: maximumForcedUpdatesPerInterval must be 1 to \(Self.maximumUpdatesCap); got \(maximumForcedUpdatesPerInterval).")
        }
        self.perHostInterval = perHostInterval
        self.maximumForcedUpdatesPerInterval = maximumForcedUpdatesPerInterval
    }

    private init(checkedInterval: Duration, maximumForcedUpdatesPerInterval: Int) {
        perHostInterval = checkedInterval
        self.maximumForcedUpdatesPerInterval = maximumForcedUpdatesPerInterval
    }

    /// One forced update per host per minute, three a minute in all.
    public static let `default` = PinFailureRecoveryPolicy(checkedInterval: .seconds(60), maximumForcedUpdatesPerInterval: 3)
}
