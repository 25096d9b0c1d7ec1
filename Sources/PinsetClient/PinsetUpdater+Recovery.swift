import Foundation

extension PinsetUpdater {
    /// After a connection to `host` was refused by these pins: forces a bundle update, if the throttle allows
    /// one, and says whether a retry would now pass.
    ///
    /// The evaluator remembers the chain it refused for each host; this checks that chain against the pins in
    /// force before and after the update, so the answer is ``PinFailureRecovery/retryWithNewPins(version:)``
    /// only when the connection that failed would now be accepted. Retry it once, on a new connection: a
    /// failure then is final until the throttle allows another update.
    ///
    /// The forced update is an ordinary `update()`: the same signature, customer, freshness, expiry, rollback,
    /// revocation-floor and storage rules, so pins change only to a verified, newer bundle, and a refused or
    /// failed update keeps the pins held. At most one forced update per host per
    /// `configuration.pinFailureRecovery.perHostInterval`, and at most `maximumForcedUpdatesPerInterval` for all
    /// hosts in that interval (``PinFailureRecoveryPolicy``); a failure while a forced update runs waits for it
    /// rather than fetching again. A host this updater's evaluator refused nothing for forces nothing.
    public func recoverAfterPinFailure(host: String) async -> PinFailureRecovery {
        guard let chain = refusals.chain(for: host) else { return .noRecordedFailure }
        // An update since the failure (the periodic one, or another host's recovery) may already accept it.
        if let version = versionAccepting(chain, host: host) { return .retryWithNewPins(version: version) }
        let key = RecentPinRefusals.key(host)
        let result: Result<VerifiedPinSet, PinUpdateError>
        if let running = forcedUpdate {
            recoveryThrottle.noteJoined(host: key, at: monotonicNow())
            result = await running.value
        } else {
            if case .throttled(let retryAfter) = recoveryThrottle.admit(host: key, at: monotonicNow()) {
                return .throttled(retryAfter: retryAfter)
            }
            let task = Task { await self.updateResult() }
            forcedUpdate = task
            result = await task.value
            if forcedUpdate == task { forcedUpdate = nil }
        }
        switch result {
        case .failure(let error):
            return .updateFailed(error)
        case .success:
            if let version = versionAccepting(chain, host: host) { return .retryWithNewPins(version: version) }
            return .pinsStillRefuse
        }
    }

    /// The version of the pins in force when they accept `chain` for `host` (and the refusal is then forgotten).
    private func versionAccepting(_ chain: [[UInt8]], host: String) -> Int64? {
        guard let pins = evaluator.pinSet, evaluator.verdictWithoutNotifying(host: host, chain: chain).isTrusted else { return nil }
        refusals.forget(host: host)
        return pins.version
    }

    private func updateResult() async -> Result<VerifiedPinSet, PinUpdateError> {
        do {
            return .success(try await update())
        } catch {
            return .failure(error)
        }
    }
}
