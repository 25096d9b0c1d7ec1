import Foundation
import PinsetCore
import PinsetStore

/// The rule that says when a host may switch its live key to a key pinned ahead (a *next* key) without locking
/// any app out.
///
/// Key pre-rotation: the key the next certificate will use is pinned, and so delivered to apps, well before the
/// renewal that uses it. The switch is safe for a next key when both hold:
///
/// 1. **Time.** It has been in every bundle served for at least the longest time an app may go on accepting a
///    bundle signed before it was added: the resign interval (the latest a bundle carries a change), the content
///    staleness (how long an instance that cannot read the store re-signs what it read last), the freshness
///    window (how long after signing apps accept a download) and the longest `Cache-Control: max-age` (how long a
///    cache may hand a bundle out) — each the longest over the running server instances, which share their
///    settings through the store. No running instance: no figures, not safe.
/// 2. **Uptake.** Of the bundle fetches the running instances counted in their window that reported the version
///    the app held (`Pinset-Version`), at least `minimumShare` held a version that carries the key (its
///    `publishedVersion` or later, up to the customer's current version: a higher one was never served and is an
///    invented claim). Versions counted but not itemized count as not holding it; fetches that
///    reported no version (legacy clients, first launches) are left out and shown. No fetch reporting a
///    version: not safe, unless `minimumShare` is 0.
///
/// 3. **Legacy clients.** For a customer serving legacy GCX clients, the key is one they can match.
///
/// The uptake figures are what clients claim (`Pinset-Version` is not authenticated): a flood of claims can move
/// the share either way, which is why the time rule never depends on it and `minimumShare` can be lowered by an
/// operator who sees a flood holding the gate closed.
///
/// Pure: the caller reads the host, the shared uptake and the clock. Apps that stay offline longer than the
/// window are not seen by either rule; they recover at their next fetch, since the trust server's own
/// connection is not pinned by these keys.
public struct RotationGate: Sendable {
    /// The share used when none is configured: 95 % of the apps seen lately hold the key.
    public static let defaultMinimumShare = 0.95

    public var minimumShare: Double

    public init(minimumShare: Double = defaultMinimumShare) {
        self.minimumShare = minimumShare
    }

    /// What keeps one next key from being used now.
    public enum Blocker: Hashable, Sendable {
        /// Added too recently: safe by time from `until` on, `seconds` from now.
        case tooRecent(until: Date, seconds: Int64)
        /// No running server instance shares uptake figures through the store.
        case noServerFigures
        /// No counted fetch reported a version.
        case noReportedFetches
        /// The share of fetches holding the key is below the minimum.
        case shareBelowMinimum(share: Double, minimum: Double)
        /// The customer serves legacy GCX clients, which cannot match this key (they match an RSA key or an
        /// unexpired certificate's hash, never an EC key or a bare hash).
        case legacyClientsCannotUseKey

        public var sentence: String {
            switch self {
            case .tooRecent(let until, let seconds):
                "published too recently: apps may still accept bundles without it for \(seconds) s (until \(RotationGate.format(until)))"
            case .noServerFigures:
                "no running 'pinset serve' shares uptake figures through this database, so neither how long apps keep older bundles nor how many hold this key is known; check that the servers run and use this database"
            case .noReportedFetches:
                "no bundle fetch in the servers' window reported the version it held, so no app is known to hold this key (pass --minimum-share 0 for a customer without Pinset clients)"
            case .shareBelowMinimum(let share, let minimum):
                "only \(RotationGate.percent(share)) of the fetches that reported a version held one with this key; at least \(RotationGate.percent(minimum)) must"
            case .legacyClientsCannotUseKey:
                "the customer serves legacy GCX clients, which can match only an RSA key (or an unexpired certificate's SHA-256), so a certificate with this key locks them out whatever their pins; pin an RSA next key instead"
            }
        }
    }

    /// One next key of a host, judged.
    public struct Candidate: Hashable, Sendable {
        public var key: SHA256Fingerprint
        public var label: String
        public var addedAt: Date
        public var publishedVersion: Int64
        /// When the time rule is met; nil without server figures.
        public var safeByTimeFrom: Date?
        /// Fetches that reported a version holding the key, and all that reported a version.
        public var fetchesHoldingKey: Int
        public var fetchesReportingVersion: Int
        public var fetchesWithoutVersion: Int
        public var blockers: [Blocker]

        public var isSafe: Bool { blockers.isEmpty }
        public var share: Double? { fetchesReportingVersion == 0 ? nil : Double(fetchesHoldingKey) / Double(fetchesReportingVersion) }
    }

    /// One host, judged.
    public struct Readiness: Hashable, Sendable {
        public enum Verdict: String, Hashable, Sendable {
            /// A next key may go live now.
            case safe
            /// A next key is pinned, but none may go live yet.
            case notYet = "not-yet"
            /// No next key is pinned (or the key asked about is not one).
            case noNextKey = "no-next-key"
        }

        public var customer: CustomerName
        public var hostname: Hostname
        public var verdict: Verdict
        public var candidates: [Candidate]
        /// The settings the time rule used: the longest over the running instances.
        public var servingTimes: ServingTimes?
        public var instanceCount: Int
        /// Set when the question was about one key that is not a next key of the host: what it is instead.
        public var keyNote: String?
    }

    /// Judges `host`: every next key, or only `key`.
    public func judge(_ host: RotationHost, uptake: SharedUptake, key: SHA256Fingerprint? = nil, now: Date) -> Readiness {
        let times = ServingTimes.longest(uptake.instances.map(\.servingTimes))
        var nextPins = host.nextPins
        var keyNote: String?
        if let key {
            nextPins = nextPins.filter { $0.pin.spkiSHA256 == key }
            if nextPins.isEmpty {
                keyNote = host.pins.contains(where: { $0.pin.spkiSHA256 == key })
                    ? "\(key.base64) is pinned for \(host.hostname) but not as a next key: it is live or a backup. Mark it with 'pinset rotation add-next'."
                    : "\(key.base64) is not pinned for \(host.hostname) at all: a certificate with this key would lock apps out. Pin it with 'pinset rotation add-next', then wait for this gate."
            }
        }
        let withoutVersion = uptake.fetches[UptakeSnapshot.unknownVersion] ?? 0
        let reporting = uptake.fetches.filter { $0.key != UptakeSnapshot.unknownVersion }.values.reduce(0, +)
        let candidates = nextPins.compactMap { entry -> Candidate? in
            guard let spki = entry.pin.spkiSHA256 else { return nil }
            // A version above the customer's current one was never served: an invented claim, held against the key.
            let holding = uptake.fetches.filter { $0.key >= max(entry.publishedVersion, 1) && $0.key <= host.customerVersion }.values.reduce(0, +)
            var blockers: [Blocker] = []
            if host.servesLegacyClients && !entry.pin.isUsableByLegacyClients(at: now) {
                blockers.append(.legacyClientsCannotUseKey)
            }
            var safeFrom: Date?
            if let times {
                let from = entry.addedAt.addingTimeInterval(TimeInterval(times.longestAcceptanceOfOlderBundle))
                safeFrom = from
                if now < from {
                    blockers.append(.tooRecent(until: from, seconds: Int64(from.timeIntervalSince(now).rounded(.up))))
                }
            } else {
                blockers.append(.noServerFigures)
            }
            if minimumShare > 0 && times != nil {
                if reporting == 0 {
                    blockers.append(.noReportedFetches)
                } else if Double(holding) / Double(reporting) < minimumShare {
                    blockers.append(.shareBelowMinimum(share: Double(holding) / Double(reporting), minimum: minimumShare))
                }
            }
            return Candidate(
                key: spki, label: entry.pin.label, addedAt: entry.addedAt, publishedVersion: entry.publishedVersion,
                safeByTimeFrom: safeFrom, fetchesHoldingKey: holding, fetchesReportingVersion: reporting,
                fetchesWithoutVersion: withoutVersion, blockers: blockers
            )
        }
        let verdict: Readiness.Verdict = candidates.isEmpty ? .noNextKey : candidates.contains(where: \.isSafe) ? .safe : .notYet
        return Readiness(
            customer: host.customer, hostname: host.hostname, verdict: verdict, candidates: candidates,
            servingTimes: times, instanceCount: uptake.instances.count, keyNote: keyNote
        )
    }

    static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    public static func percent(_ share: Double) -> String {
        let value = (share * 1000).rounded(.down) / 10
        return value == value.rounded() ? "\(Int(value)) %" : "\(value) %"
    }
}
