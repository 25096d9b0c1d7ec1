/// Decides whether a pin failure may force a bundle update now, under a ``PinFailureRecoveryPolicy``.
///
/// Times are durations on a monotonic clock (any origin), never the device's date: a date set back by the user
/// or a time server must neither lift the bound nor freeze recovery. State is at most one entry per host
/// admitted within the last interval, so at most `maximumForcedUpdatesPerInterval` hosts plus those that joined
/// an update in flight.
///
/// A value; the updater keeps one and is the only one to mutate it.
struct PinFailureRecoveryThrottle: Sendable {
    enum Admission: Hashable, Sendable {
        /// Fetch now; the attempt is counted for the host and for the global cap.
        case admitted
        /// No fetch: the host's last forced update, or the global cap, allows the next one `retryAfter` from now.
        case throttled(retryAfter: Duration)
    }

    let policy: PinFailureRecoveryPolicy
    /// When each host last had a forced update (or joined one), within the last interval.
    private var lastAttempt: [String: Duration] = [:]
    /// When the forced updates of the last interval started, oldest first.
    private var recentUpdates: [Duration] = []

    init(policy: PinFailureRecoveryPolicy) {
        self.policy = policy
    }

    /// Whether `host` may force an update at `now`; an admission is counted at once, before the fetch, so that
    /// concurrent failures cannot all pass the check.
    mutating func admit(host: String, at now: Duration) -> Admission {
        forgetExpired(at: now)
        let interval = policy.perHostInterval
        if let last = lastAttempt[host] {
            return .throttled(retryAfter: last + interval - now)
        }
        if recentUpdates.count >= policy.maximumForcedUpdatesPerInterval, let oldest = recentUpdates.first {
            return .throttled(retryAfter: oldest + interval - now)
        }
        lastAttempt[host] = now
        recentUpdates.append(now)
        return .admitted
    }

    /// `host` shares an update another failure forced: it had its fresh bundle, so its interval starts, but the
    /// global cap counts fetches and none was added.
    mutating func noteJoined(host: String, at now: Duration) {
        forgetExpired(at: now)
        lastAttempt[host] = now
    }

    /// Hosts whose interval is still running at `now`.
    func hostsInInterval(at now: Duration) -> Int {
        lastAttempt.values.filter { now - $0 < policy.perHostInterval }.count
    }

    private mutating func forgetExpired(at now: Duration) {
        let interval = policy.perHostInterval
        lastAttempt = lastAttempt.filter { now - $0.value < interval }
        recentUpdates.removeAll { now - $0 >= interval }
    }
}
