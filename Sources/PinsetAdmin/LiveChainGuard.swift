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

    public init(overrideReason: String? = nil, caFile: String? = nil, connectTo: String? = nil) {
        self.overrideReason = overrideReason
        self.caFile = caFile
        self.connectTo = connectTo
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
    public let store: PinStore
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
        let (result, _) = change(current)
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
            throw AdminError("Customer '\(customer)' has no host '\(hostname)'. List its hosts with 'pinset host list \(customer)'.")
        }
        let (result, edit) = change(current)
        return HostEditPreview(edit: edit, outcome: try await run(result))
    }

    /// A host being added, checked without committing it.
    public func previewNewHost(_ host: HostPins) async throws -> HostEditPreview {
        HostEditPreview(edit: HostEdit(added: host.pins), outcome: try await run(host))
    }

    private func currentHost() throws -> HostPins? {
        try store.pinSet(for: customer)?.hosts.first(where: { $0.hostname == hostname })
    }

    /// A store that cannot say whether the host is unmonitored fails the edit rather than guessing.
    private func run(_ result: HostPins) async throws -> LiveEditCheck.Outcome {
        let unmonitored = settings.overrideReason == nil
            ? try store.unmonitoredHosts(of: customer).first(where: { $0.hostname == hostname })?.reason : nil
        return await LiveEditCheck.run(
            result, overrideReason: settings.overrideReason, unmonitoredReason: unmonitored, caFile: settings.caFile, connectTo: settings.connectTo
        )
    }

    /// Runs the check on `result`; returns its outcome, or throws why the edit is refused.
    private func permit(_ result: HostPins) async throws -> LiveEditCheck.Outcome {
        let outcome = try await run(result)
        switch outcome {
        case .overridden, .unmonitored:
            return outcome
        case .unreachable(_, let reason):
            throw AdminError("Refused: the pins of \(hostname) after this edit could not be checked against its live chain. \(reason) Nothing was changed. If the host is not reachable from here, mark it with 'pinset host update \(customer) \(hostname) --unmonitored REASON', or pass --skip-live-check --reason TEXT.")
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
