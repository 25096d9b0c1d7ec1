/// The limits a genuine bundle stays within, shared by the server (which never signs outside them) and the
/// client (which refuses anything outside them). See docs/bundle-format.md, "Bounds".
///
/// They exist for the case a revocation floor cannot reach on its own: a holder of a leaked online signer key
/// signs a bundle with a `version` near `Int64.max` and an `expires` a century away. Without bounds, every
/// genuine bundle after it is a rollback for the apps that accepted it — TUF's fast-forward attack. With them,
/// a forged version can run at most `maximumVersionLead` ahead of the clock, so genuine versions overtake it
/// within that time even before the floor recovers the apps, and a forged bundle is never valid for longer
/// than the client's lifetime limit.
public enum BundleBounds {
    /// How far, in milliseconds, a bundle's `version` may lie ahead of its own signing time (`timestamp` in
    /// milliseconds): one day.
    ///
    /// Versions are made from the clock of the machine that records a change, in milliseconds, raised by one
    /// when the clock stalls or steps back (see `ChangeRecorder`). A version therefore lies ahead of a later
    /// signing time only by how far a clock stepped back between the change and the signing, or by the count
    /// of changes made within one millisecond. A day covers any clock correction that NTP or an operator makes;
    /// a server whose clock reads further back than that refuses to sign the customer and says why.
    public static let maximumVersionLead: Int64 = 86_400_000

    /// The largest bundle lifetime (`expires - timestamp`) Pinset clients accept by default: 31 days. The server
    /// issues one day unless configured otherwise, and refuses to be configured above this.
    public static let defaultMaximumLifetimeSeconds: Int64 = 31 * 86_400

    /// How long a bundle the server or `pinset sign` makes stays acceptable to Pinset clients, unless configured
    /// otherwise: a day.
    public static let defaultLifetimeSeconds: Int64 = 86_400

    /// The highest `version` a bundle signed at `timestamp` (Unix seconds) may carry.
    public static func highestVersion(signedAt timestamp: Int64) -> Int64 {
        let (milliseconds, overflowed) = timestamp.multipliedReportingOverflow(by: 1000)
        if overflowed { return timestamp < 0 ? Int64.min : Int64.max }
        let (highest, overflowedSum) = milliseconds.addingReportingOverflow(maximumVersionLead)
        return overflowedSum ? Int64.max : highest
    }

    /// Why a bundle with `version` must not be signed (server) or accepted (client) at `timestamp`, or `nil`.
    public static func versionProblem(version: Int64, signedAt timestamp: Int64) -> String? {
        let highest = highestVersion(signedAt: timestamp)
        guard version > highest else { return nil }
        let leadSeconds = version / 1000 - timestamp
        return "version \(version) lies about \(leadSeconds) s ahead of its signing time \(timestamp); a version may lead its signing time by at most \(maximumVersionLead / 1000) s (\(maximumVersionLead) ms)"
    }

    /// Why a bundle valid from `timestamp` until `expires` lives longer than `maximumLifetimeSeconds`, or `nil`.
    public static func lifetimeProblem(timestamp: Int64, expires: Int64, maximumLifetimeSeconds: Int64) -> String? {
        let (lifetime, overflowed) = expires.subtractingReportingOverflow(timestamp)
        guard overflowed || lifetime > maximumLifetimeSeconds else { return nil }
        let shown = overflowed ? "more than \(Int64.max)" : "\(lifetime)"
        return "the bundle is valid for \(shown) s (expires - timestamp); the limit is \(maximumLifetimeSeconds) s"
    }

    /// The longest report-only window (`report-only-until - timestamp`) a bundle may announce: 72 hours. The server
    /// refuses to be configured above it, and Pinset clients refuse a bundle announcing a longer one, so that
    /// a leaked signer key can switch a host's pinning off for at most this long per bundle it gets accepted.
    public static let maximumReportOnlySeconds: Int64 = 72 * 3_600

    /// Why a bundle signed at `timestamp` announces a report-only window longer than `maximumSeconds` for one of
    /// `hosts`, or `nil`. A window that ends at or before `timestamp` is over and within any bound.
    public static func reportOnlyProblem(hosts: [PinnedHost], signedAt timestamp: Int64, maximumSeconds: Int64 = maximumReportOnlySeconds) -> String? {
        for host in hosts {
            guard let until = host.reportOnlyUntil else { continue }
            let (length, overflowed) = until.subtractingReportingOverflow(timestamp)
            guard overflowed || length > maximumSeconds else { continue }
            let shown = overflowed ? "more than \(Int64.max)" : "\(length)"
            return "the bundle announces a report-only window for \(host.hostname) of \(shown) s after its signing time (report-only-until - timestamp); the limit is \(maximumSeconds) s"
        }
        return nil
    }
}
