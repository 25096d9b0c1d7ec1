import PinsetLiveCheck
import PinsetStatus

extension CustomerHealth {
    /// The health as `viewer` may read it. An operator reads it in full. Anyone else reads one wording for a host the
    /// monitor could not check, as for their own dry runs (``LiveChainError/told(toOperator:endpoint:)``): the
    /// monitor's own error names the addresses a host's name resolved to and tells a closed port from a silent one,
    /// which would let whoever may add a host map the server's network one monitoring pass at a time. Why the last
    /// signing pass did not sign the customer names the server's key files, so it stays the operator's too.
    public func seen(by viewer: AdminAccount) -> CustomerHealth {
        guard !viewer.isOperator else { return self }
        var seen = self
        seen.hosts = hosts.map { host in
            guard host.state == HostCheckState.unreachable.rawValue else { return host }
            var redacted = host
            redacted.detail = LiveChainError.withoutDetail(endpoint: LiveChainFetcher.endpoint(host: host.hostname, port: host.port))
            return redacted
        }
        if notSignedReason != nil {
            seen.notSignedReason = "The last signing pass could not sign this customer, so the bundle served is an older one (or none). An operator can read why on /status or in the server's log."
        }
        return seen
    }
}

extension ServerStatus {
    /// Why this server is not ready, as `viewer` may read it: the reason names files and the database, so only an
    /// operator reads it in full.
    public func notReadyReason(seenBy viewer: AdminAccount) -> String? {
        guard let notReadyReason else { return nil }
        return viewer.isOperator ? notReadyReason : "An operator can read why on /status or in the server's log."
    }
}
