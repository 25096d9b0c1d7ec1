import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// Live-chain checks each admin's token may start through the admin API and the dashboard in a sliding minute (dry
/// runs, previews, edits, approvals): past the budget that token is refused (429) for the rest of the minute. Every
/// check connects out from the server, so a script or a stolen token cannot make it connect out without bound; and
/// since each token has its own budget, as its own count of refusals, whoever holds a leaked CI token cannot spend
/// the admin's other tokens' checks and so lock the admin out of approving. Checks answered from
/// ``RecentLiveChecks`` or ``ChangeRequestPreviews`` cost nothing. The table is bounded: when full, the token whose
/// last check is oldest is forgotten.
public final class LiveCheckBudget: Sendable {
    /// The default of `api.liveChecksPerAdminPerMinute`: ample for an admin at work, a few seconds of a loop.
    public static let defaultChecksPerMinute = 30

    public let checksPerMinute: Int
    public let maximumAdmins: Int
    private let state = LockedValue<[String: [Date]]>([:])

    public init(checksPerMinute: Int = defaultChecksPerMinute, maximumAdmins: Int = 10_000) {
        self.checksPerMinute = checksPerMinute
        self.maximumAdmins = maximumAdmins
    }

    /// Counts one check started by `admin` with the credential `key` names (``AuthenticationThrottle/refusalKey(_:)``).
    ///
    /// - Throws: `AdminError` of kind `throttled` with the seconds until the token may check again, counting nothing.
    public func spend(by admin: String, key: String, now: Date = Date()) throws(AdminError) {
        let wait = state.withLock { table -> Int? in
            var recent = (table[key] ?? []).filter { now.timeIntervalSince($0) < 60 }
            if recent.count >= checksPerMinute, let oldest = recent.first {
                table[key] = recent
                return max(1, Int((60 - now.timeIntervalSince(oldest)).rounded(.up)))
            }
            if table[key] == nil && table.count >= maximumAdmins,
               let stalest = table.min(by: { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) })?.key {
                table[stalest] = nil
            }
            recent.append(now)
            table[key] = recent
            return nil
        }
        if let wait {
            throw AdminError(
                "Admin \(admin) started \(checksPerMinute) live-chain checks with this token in the last minute, as many as one token may (each connects out from the server); try again in \(wait) s. The same dry run or request page within 30 s reuses its check at no cost.",
                kind: .throttled, retryAfterSeconds: wait
            )
        }
    }
}

/// Results of live-chain checks of a host's pins as they would be after an edit (dry runs, previews), reused for
/// `maximumAge` seconds: the same result checked again in that time makes no new connection, whoever asks. One
/// check per key runs at a time; a check that failed to run (a refused budget, say) is not reused. Edits and
/// approvals never read from here: what they commit is checked afresh.
public final class RecentLiveChecks: Sendable {
    /// What decides a check's outcome: the customer, the host as the edit would leave it, and where and how it is
    /// reached.
    public struct Key: Hashable, Sendable {
        public var customer: CustomerName
        public var host: HostPins
        public var caFile: String?
        public var connectTo: String?
        public var addressPolicy: OutboundAddressPolicy?

        public init(customer: CustomerName, host: HostPins, caFile: String?, connectTo: String?, addressPolicy: OutboundAddressPolicy?) {
            self.customer = customer
            self.host = host
            self.caFile = caFile
            self.connectTo = connectTo
            self.addressPolicy = addressPolicy
        }
    }

    public let maximumAge: TimeInterval
    public let maximumEntries: Int
    private let entries = LockedValue<[Key: (started: Date, check: Task<LiveEditCheck.Outcome, Never>)]>([:])

    public init(maximumAge: TimeInterval = 30, maximumEntries: Int = 1000) {
        self.maximumAge = maximumAge
        self.maximumEntries = maximumEntries
    }

    /// A recent (or running) check's outcome for `key`, or that of a new one: `beforeStarting` runs first (and may
    /// refuse it by throwing), then `check`.
    public func outcome(
        for key: Key, now: Date = Date(), beforeStarting: () throws -> Void, check: @escaping @Sendable () async -> LiveEditCheck.Outcome
    ) async throws -> LiveEditCheck.Outcome {
        let task = try entries.withLock { table throws -> Task<LiveEditCheck.Outcome, Never> in
            if let entry = table[key], now.timeIntervalSince(entry.started) < maximumAge { return entry.check }
            try beforeStarting()
            table = table.filter { now.timeIntervalSince($0.value.started) < maximumAge }
            if table.count >= maximumEntries, let oldest = table.min(by: { $0.value.started < $1.value.started })?.key {
                table[oldest] = nil
            }
            let task = Task { await check() }
            table[key] = (now, task)
            return task
        }
        return await task.value
    }
}
