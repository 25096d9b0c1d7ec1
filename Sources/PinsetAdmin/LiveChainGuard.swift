import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// How an edit of a host's pins is checked against the chain the host serves before it is committed.
public struct LiveCheckSettings: Sendable {
    /// Skip the check, for this reason (recorded in the audit log).
    public var overrideReason: String?
    /// PEM file of CA certificates to validate the chain against instead of the system store.
    public var caFile: String?
    /// Reach the host at this `ADDRESS[:PORT]` while sending and validating its name.
    public var connectTo: String?
    /// Where to reach each host, by name and port (the server's `monitoring.connectTo`): used when `connectTo` is
    /// not given, with the port of the host checked, as the host monitor uses it.
    public var connectToMap: ConnectToMap?
    /// The most one fetch may take; a failed check started by an admin who is not an operator is answered only
    /// after it, so that its timing does not tell a closed port from a filtered one.
    public var timeout: Duration = LiveChainFetcher.defaultTimeout
    /// Which addresses the host's name may lead to: the server's policy for checks admins start through it; nil for
    /// a command an admin runs on their own machine, which connects wherever the name resolves.
    public var addressPolicy: OutboundAddressPolicy?
    /// The admin on whose behalf the server checks (``started(by:)``): charged to `budget`, and told why a chain
    /// could not be fetched only as an operator. Nil: the local CLI, whose user sees everything.
    public var startedBy: AdminAccount?
    /// Checks each admin may start in a minute; nil: no limit (the local CLI).
    public var budget: LiveCheckBudget?
    /// Where dry runs and previews reuse a recent check of the same result; nil: every preview checks.
    public var recentChecks: RecentLiveChecks?
    /// Told the full reason of every check that could not fetch a chain, with the admin who started it: the server
    /// logs it, since admins other than operators are told only that the fetch failed.
    public var onFailure: (@Sendable (_ endpoint: String, _ reason: String, _ admin: String?) -> Void)?

    public init(overrideReason: String? = nil, caFile: String? = nil, connectTo: String? = nil, addressPolicy: OutboundAddressPolicy? = nil) {
        self.overrideReason = overrideReason
        self.caFile = caFile
        self.connectTo = connectTo
        self.addressPolicy = addressPolicy
    }

    /// Where to reach `host` on `port`: `connectTo`, else its entry in `connectToMap`; nil resolves the name.
    public func connectTo(host: Hostname, port: UInt16) -> String? {
        connectTo ?? connectToMap?.target(host: host.rawValue, port: Int(port))?.description
    }

    /// Holds the answer to a failed check of an admin who is not an operator until `timeout` has passed since
    /// `started`: one told only that the fetch failed must not learn from how long it took either (a closed port
    /// answers at once, a filtered one at the timeout). An address the policy refused connected nowhere, and is told
    /// as such.
    func holdFailure(_ reason: LiveChainError, since started: ContinuousClock.Instant) async {
        guard !toldInFull, [.unreachable, .notValidated].contains(reason.kind) else { return }
        try? await Task.sleep(until: started + timeout, clock: .continuous)
    }

    /// These settings for a check `account` starts.
    public func started(by account: AdminAccount) -> LiveCheckSettings {
        var settings = self
        settings.startedBy = account
        return settings
    }

    /// Whether a failure is told in full: to an operator, and to the local CLI's user.
    public var toldInFull: Bool { startedBy?.isOperator ?? true }

    /// Counts a check about to connect out against the budget of the admin who starts it.
    func spendBudget() throws {
        guard let budget, let startedBy else { return }
        try budget.spend(by: startedBy.name, key: AuthenticationThrottle.refusalKey(startedBy))
    }
}

/// An edit of a host, as the live-chain check describes it.
public struct HostEdit: Sendable {
    public var added: [Pin] = []
    public var removed: [Pin] = []
    public var newPort: UInt16?
    public var other: [String] = []

    public init(added: [Pin] = [], removed: [Pin] = [], newPort: UInt16? = nil, other: [String] = []) {
        self.added = added
        self.removed = removed
        self.newPort = newPort
        self.other = other
    }
}

/// An edit checked without committing it.
public struct HostEditPreview: Sendable {
    public var edit: HostEdit
    public var outcome: LiveEditCheck.Outcome
}

/// An edit the check permits: the record the store commits with, and the outcome to show.
public struct PermittedHostEdit: Sendable {
    public var record: LiveCheckRecord
    public var outcome: LiveEditCheck.Outcome
}

/// Refuses pin edits that would lock apps out (`LiveEditCheck`): reads the host, computes the result of the
/// edit, checks it against the live chain, and returns a `LiveCheckRecord`; the store then commits only if
/// the host still has the pins and port that were checked.
public struct LiveChainGuard: Sendable {
    let store: PinStore
    public let customer: CustomerName
    public let hostname: Hostname
    public let settings: LiveCheckSettings

    public init(store: PinStore, customer: CustomerName, hostname: Hostname, settings: LiveCheckSettings) {
        self.store = store
        self.customer = customer
        self.hostname = hostname
        self.settings = settings
    }

    /// Checks the host as `change` would leave it. Returns the record to commit with, or `nil` when the
    /// customer or host does not exist (the store's write then says so).
    ///
    /// - Throws: `AdminError` when the result matches nothing or the check cannot run.
    public func check(_ change: (HostPins) -> (result: HostPins, edit: HostEdit)) async throws -> PermittedHostEdit? {
        guard let current = try currentHost() else { return nil }
        let (result, edit) = change(current)
        // An edit that changes nothing (a pin already there, a hash that is not) connects nowhere: the store refuses
        // it with what was wrong, rather than the admin reading about a chain it could not fetch. The record still
        // holds the host as read, so a change made meanwhile is not written unchecked.
        if edit.added.isEmpty && edit.removed.isEmpty && edit.other.isEmpty && edit.newPort == nil && result == current {
            let nothing = LiveEditCheck.Outcome.overridden(reason: "nothing to check: the edit changes no pin")
            return PermittedHostEdit(record: LiveCheckRecord(checkedHost: current, auditNote: nothing.auditNote), outcome: nothing)
        }
        let outcome = try await permit(result)
        return PermittedHostEdit(record: LiveCheckRecord(checkedHost: current, auditNote: outcome.auditNote), outcome: outcome)
    }

    /// Checks the pins of a host that is being added; the outcome's `auditNote` goes to its audit entry. The
    /// store adds the host only if it does not exist yet, so the checked set is the committed one.
    public func checkNewHost(_ host: HostPins) async throws -> LiveEditCheck.Outcome {
        try await permit(host)
    }

    /// The edit and how its result would fare, committing nothing.
    public func preview(_ change: (HostPins) -> (result: HostPins, edit: HostEdit)) async throws -> HostEditPreview {
        guard let current = try currentHost() else {
            throw AdminError.noHost(hostname, of: customer)
        }
        let (result, edit) = change(current)
        return HostEditPreview(edit: edit, outcome: try await run(result, reusable: true))
    }

    /// A host being added, checked without committing it.
    public func previewNewHost(_ host: HostPins) async throws -> HostEditPreview {
        HostEditPreview(edit: HostEdit(added: host.pins), outcome: try await run(host, reusable: true))
    }

    private func currentHost() throws -> HostPins? {
        try store.pinSet(for: customer)?.hosts.first(where: { $0.hostname == hostname })
    }

    /// A store that cannot say whether the host is unmonitored fails the edit rather than guessing. A check that
    /// connects out is charged to the budget of the admin who starts it; a preview (`reusable`) first looks for a
    /// recent check of the same result.
    private func run(_ result: HostPins, reusable: Bool = false) async throws -> LiveEditCheck.Outcome {
        if let reason = settings.overrideReason {
            // Held to the rules of every other reason the audit log keeps, whichever way the edit came in.
            return .overridden(reason: try PinStore.validatedReviewText(reason, what: "reason for skipping the live-chain check", required: true))
        }
        if let reason = try store.unmonitoredHosts(of: customer).first(where: { $0.hostname == hostname })?.reason {
            return .unmonitored(reason: reason)
        }
        let settings = self.settings
        let connectTo = settings.connectTo(host: result.hostname, port: result.port)
        let started = ContinuousClock.now
        let check: @Sendable () async -> LiveEditCheck.Outcome = {
            let outcome = await LiveEditCheck.run(
                result, overrideReason: nil, unmonitoredReason: nil, caFile: settings.caFile, connectTo: connectTo, addressPolicy: settings.addressPolicy,
                timeout: settings.timeout
            )
            if case .unreachable(let endpoint, let reason) = outcome {
                settings.onFailure?(endpoint, reason.description, settings.startedBy?.name)
            }
            return outcome
        }
        let outcome: LiveEditCheck.Outcome
        if reusable, let recentChecks = settings.recentChecks {
            let key = RecentLiveChecks.Key(customer: customer, host: result, caFile: settings.caFile, connectTo: connectTo, addressPolicy: settings.addressPolicy)
            outcome = try await recentChecks.outcome(for: key, beforeStarting: { try settings.spendBudget() }, check: check)
        } else {
            try settings.spendBudget()
            outcome = await check()
        }
        // Per caller, whether the check was its own or shared.
        if case .unreachable(_, let reason) = outcome { await settings.holdFailure(reason, since: started) }
        return outcome
    }

    /// Runs the check on `result`; returns its outcome, or throws why the edit is refused. With publish windows, every
    /// pin the host stores is checked, and the edit is refused unless the pins a pass publishes — now and after every
    /// later window boundary — include one that matches the live chain: a scheduled removal that would lock apps out
    /// is refused when it is made.
    private func permit(_ result: HostPins) async throws -> LiveEditCheck.Outcome {
        let schedule = PinSchedule(result.storedPins)
        guard schedule.pins.contains(where: { $0.window != nil }) else { return try await permitNow(result) }
        var everyPin = result
        everyPin.pins = result.storedPins
        everyPin.scheduledPins = []
        let outcome = try await permitNow(everyPin)
        guard case .checked(let endpoint, let check) = outcome else { return outcome }
        let unmatched = Set(check.unmatchedPins)
        let now = store.now()
        for time in [now] + schedule.changes(after: now) {
            let published = schedule.published(at: time)
            guard !published.isEmpty, !published.contains(where: { !unmatched.contains($0) }) else { continue }
            throw AdminError("Refused: from \(time == now ? "now" : PinWindow.format(time)) the pins of \(hostname) that signing passes publish ("
                + published.map(\.displayName).joined(separator: ", ")
                + ") would match no certificate of the chain \(endpoint) serves, so apps would fail to connect once they get that bundle. Live chain SPKI SHA-256: "
                + check.chain.map { "\($0.role) \($0.spkiSHA256.base64) (\($0.subject))" }.joined(separator: ", ")
                + ". Nothing was changed. Keep a pin of the live chain published over that time (end its window later, or start its replacement's earlier), or pass --skip-live-check --reason TEXT.")
        }
        return outcome
    }

    private func permitNow(_ result: HostPins) async throws -> LiveEditCheck.Outcome {
        let outcome = try await run(result)
        switch outcome {
        case .overridden, .unmonitored:
            return outcome
        case .unreachable(let endpoint, let reason):
            throw AdminError("Refused: the pins of \(hostname) after this edit could not be checked against its live chain. \(reason.told(toOperator: settings.toldInFull, endpoint: endpoint)) Nothing was changed. If the host is not reachable from here, mark it with 'pinset host update \(customer) \(hostname) --unmonitored REASON', or pass --skip-live-check --reason TEXT.")
        case .checked(let endpoint, let check) where check.fails:
            throw AdminError("Refused: after this edit no pin of \(hostname) would match any certificate of the chain \(endpoint) serves, so apps would fail to connect. Live chain SPKI SHA-256: "
                + check.chain.map { "\($0.role) \($0.spkiSHA256.base64) (\($0.subject))" }.joined(separator: ", ")
                + ". Pins matching none: " + (check.unmatchedPins.isEmpty ? "(no pins left)" : check.unmatchedPins.map(\.displayName).joined(separator: ", "))
                + ". Nothing was changed. Add a pin of the live chain first, or pass --skip-live-check --reason TEXT.")
        case .checked:
            return outcome
        }
    }
}
