import Foundation
import PinsetCore

/// What a live-chain check says about one host: the states `pinset check` prints and the monitor counts.
public enum HostCheckState: String, Sendable, CaseIterable {
    case matches
    /// Apps connect through a spare key; the set has no backup left until a new spare is pinned.
    case matchesOnlyBackup = "matches-only-backup"
    /// The live leaf expires soon and its key is the only match: a renewal with a new key locks apps out.
    case soleKeyExpiring = "sole-key-expiring"
    /// The live leaf expires soon and no next key is pinned: the renewal has no pre-pinned key to use.
    case expiringWithoutNextKey = "expiring-without-next-key"
    /// The host serves a key pinned as next: the renewal happened, and the old keys' pins can be retired
    /// (`pinset rotation complete`).
    case liveKeyIsNext = "live-key-is-next"
    /// No pin matches the live chain: apps fail now.
    case matchesNothing = "matches-nothing"
    /// No validated chain could be fetched (connection, handshake or validation failed).
    case unreachable
    /// Marked as not reachable from the trust server; not checked.
    case unmonitored

    /// Apps would fail now, or nobody can tell: what makes `pinset check` exit non-zero.
    public var isFailing: Bool { self == .matchesNothing || self == .unreachable }

    /// Lower is worse: how lists for operators are ordered.
    public var severity: Int {
        switch self {
        case .matchesNothing: 0
        case .unreachable: 1
        case .soleKeyExpiring: 2
        case .expiringWithoutNextKey: 3
        case .matchesOnlyBackup: 4
        case .liveKeyIsNext: 5
        case .unmonitored: 6
        case .matches: 7
        }
    }
}

/// One host to check, with the reason it is unmonitored when it is.
public struct HostCheckJob: Hashable, Sendable {
    public var customer: CustomerName
    public var host: HostPins
    public var unmonitoredReason: String?
    /// The SPKI hashes of the host's pins marked next (pinned ahead of a renewal).
    public var nextKeys: Set<SHA256Fingerprint>

    public init(customer: CustomerName, host: HostPins, unmonitoredReason: String? = nil, nextKeys: Set<SHA256Fingerprint> = []) {
        self.customer = customer
        self.host = host
        self.unmonitoredReason = unmonitoredReason
        self.nextKeys = nextKeys
    }

    /// Every pinned host of `pinSets`, in their order, and every unmonitored one (to list its reason). A host
    /// without pins is not in any bundle, so apps do not enforce anything for it and there is nothing to check.
    public static func jobs(
        for pinSets: [PinSet], unmonitoredReason: (CustomerName, Hostname) -> String?,
        nextKeys: (CustomerName, Hostname) -> Set<SHA256Fingerprint> = { _, _ in [] }
    ) -> [HostCheckJob] {
        pinSets.flatMap { pinSet in
            pinSet.hosts.compactMap { host in
                let reason = unmonitoredReason(pinSet.customer, host.hostname)
                guard reason != nil || !host.pins.isEmpty else { return nil }
                return HostCheckJob(customer: pinSet.customer, host: host, unmonitoredReason: reason, nextKeys: nextKeys(pinSet.customer, host.hostname))
            }
        }
    }
}

/// The outcome of checking one host.
public struct HostCheckResult: Hashable, Sendable {
    public var job: HostCheckJob
    public var state: HostCheckState
    /// Which pins matched which live certificates, the live chain when nothing matched, the connection error,
    /// or the unmonitored reason.
    public var detail: String
    /// ``LiveChainCheck/warnings`` about the next key change.
    public var warnings: [String]
    /// The chain the host served, leaf first; empty when it was not reached (or is unmonitored).
    public var chain: [LiveCertificate]

    public init(job: HostCheckJob, state: HostCheckState, detail: String, warnings: [String] = [], chain: [LiveCertificate] = []) {
        self.job = job
        self.state = state
        self.detail = detail
        self.warnings = warnings
        self.chain = chain
    }

    public var customer: CustomerName { job.customer }
    public var host: HostPins { job.host }
}

/// Checks hosts' pins against the chains they serve: the one implementation behind `pinset check` and the
/// server's monitor.
public struct HostChecker: Sendable {
    public var fetcher: LiveChainFetcher
    public var connectTo: ConnectToMap
    /// How close to its expiry a leaf whose key is the only match is reported.
    public var expiryWarningDays: Int

    public init(fetcher: LiveChainFetcher, connectTo: ConnectToMap = ConnectToMap(), expiryWarningDays: Int = 30) {
        self.fetcher = fetcher
        self.connectTo = connectTo
        self.expiryWarningDays = expiryWarningDays
    }

    /// Checks `jobs` with at most `concurrency` connections open at once; results in the order of `jobs`.
    /// Once the calling task is cancelled no further check starts, the ones in flight end at once (as
    /// unreachable), and only the checks that ran are returned.
    public func check(_ jobs: [HostCheckJob], concurrency: Int) async -> [HostCheckResult] {
        await withTaskGroup(of: (Int, HostCheckResult).self) { group in
            var results = [HostCheckResult?](repeating: nil, count: jobs.count)
            var next = 0
            // A new check starts only when one has finished, and a finished check has closed its connection.
            while next < min(max(1, concurrency), jobs.count) {
                let index = next
                group.addTask { (index, await check(jobs[index])) }
                next += 1
            }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < jobs.count && !Task.isCancelled {
                    let index = next
                    group.addTask { (index, await check(jobs[index])) }
                    next += 1
                }
            }
            return results.compactMap { $0 }
        }
    }

    /// Checks one host (an unmonitored one only reports its reason).
    public func check(_ job: HostCheckJob, now: @Sendable () -> Date = Date.init) async -> HostCheckResult {
        if let reason = job.unmonitoredReason {
            return HostCheckResult(job: job, state: .unmonitored, detail: reason)
        }
        let host = job.host
        let port = Int(host.port)
        do {
            let chain = try await fetcher.fetchChain(host: host.hostname.rawValue, port: port, connectTo: connectTo.target(host: host.hostname.rawValue, port: port))
            let live = try LiveCertificate.chain(fromDER: chain.map { try PinMaterial.derBytes(of: $0) })
            return Self.result(of: job, against: live, now: now(), expiryWarningDays: expiryWarningDays)
        } catch {
            return HostCheckResult(job: job, state: .unreachable, detail: "\(error)")
        }
    }

    /// The state of `job`'s pins against a fetched chain.
    public static func result(of job: HostCheckJob, against live: [LiveCertificate], now: Date, expiryWarningDays: Int) -> HostCheckResult {
        let check = LiveChainCheck(pins: job.host.pins, chain: live, now: now, expiryWarningDays: expiryWarningDays)
        let leafIsNext = live.first.map { job.nextKeys.contains($0.spkiSHA256) } ?? false
        let expiringWithoutNext = job.nextKeys.isEmpty && (check.leafDaysLeft.map { $0 < expiryWarningDays } ?? false)
        // A renewal onto a pre-pinned key matches only that key, which was pinned by key alone: that is the
        // rotation having happened, not a host fallen back to its spare.
        let state: HostCheckState = switch check.state {
        case .matchesNothing: .matchesNothing
        case .matchesOnlyBackup: leafIsNext ? .liveKeyIsNext : .matchesOnlyBackup
        case .matches:
            check.soleKeyExpiresSoon ? .soleKeyExpiring
                : expiringWithoutNext ? .expiringWithoutNextKey
                : leafIsNext ? .liveKeyIsNext : .matches
        }
        let matched = check.matches.filter { !$0.certificates.isEmpty }
            .map { "\($0.pin.displayName) = \($0.certificates.map(\.role).joined(separator: "+"))" }
        let detail = check.fails
            ? "live: " + live.map { "\($0.role) \($0.spkiSHA256.base64)" }.joined(separator: ", ")
            : matched.joined(separator: ", ") + (check.leafDaysLeft.map { "; leaf expires in \($0) day(s)" } ?? "")
        return HostCheckResult(job: job, state: state, detail: detail, warnings: check.warnings + scheduleWarnings(of: job.host, against: live, now: now), chain: live)
    }

    /// Publish windows whose next boundaries would leave the host listing no pin of the chain it serves now: said
    /// before the pin leaves, since the signing pass carries a window out as scheduled.
    static func scheduleWarnings(of host: HostPins, against live: [LiveCertificate], now: Date) -> [String] {
        let schedule = PinSchedule(host.storedPins)
        let changes = schedule.changes(after: now)
        guard !changes.isEmpty else { return [] }
        let unmatched = Set(LiveChainCheck(pins: schedule.pins, chain: live, now: now, expiryWarningDays: 0).unmatchedPins)
        for time in changes {
            let listed = schedule.published(at: time)
            guard !listed.isEmpty, listed.allSatisfy(unmatched.contains) else { continue }
            return ["from \(PinWindow.format(time)) the pins listed (\(listed.map(\.displayName).joined(separator: ", "))) match no certificate of the chain served now: pin its key, or move the window with 'pinset pin window'"]
        }
        return []
    }
}
