import Foundation

/// What kind of change an audit entry records.
///
/// A string wrapper rather than an enum so that entries written by a newer program still load.
public struct AuditAction: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let customerAdded = AuditAction(rawValue: "customer.add")
    public static let customerRemoved = AuditAction(rawValue: "customer.remove")
    public static let customerUpdated = AuditAction(rawValue: "customer.update")
    public static let hostAdded = AuditAction(rawValue: "host.add")
    public static let hostUpdated = AuditAction(rawValue: "host.update")
    public static let hostRemoved = AuditAction(rawValue: "host.remove")
    /// A host put in report-only mode until a time, with the reason (docs/report-only.md).
    public static let reportOnlySet = AuditAction(rawValue: "host.report-only")
    /// A report-only window ended: early by an admin, or because its time passed.
    public static let reportOnlyEnded = AuditAction(rawValue: "host.enforce")
    public static let pinsAdded = AuditAction(rawValue: "pin.add")
    public static let pinRemoved = AuditAction(rawValue: "pin.remove")
    /// Keys pinned ahead of a renewal, or pins marked as such (`pinset rotation add-next`).
    public static let nextKeysAdded = AuditAction(rawValue: "pin.next")
    /// A renewal went live: the next keys now served lost their mark, and keys neither live nor next were retired.
    public static let rotationCompleted = AuditAction(rawValue: "pin.rotate")
    /// The database was restored from a backup and the customer's version raised above anything served.
    public static let restored = AuditAction(rawValue: "customer.restore")
    public static let adminAdded = AuditAction(rawValue: "admin.add")
    public static let adminUpdated = AuditAction(rawValue: "admin.update")
    public static let adminTokenAdded = AuditAction(rawValue: "admin.token")
    public static let adminTokensRevoked = AuditAction(rawValue: "admin.revoke")
    public static let reviewRequirementChanged = AuditAction(rawValue: "review.policy")
    public static let changeRequested = AuditAction(rawValue: "review.request")
    public static let changeRejected = AuditAction(rawValue: "review.reject")
    public static let breakGlassAcknowledged = AuditAction(rawValue: "review.acknowledge")
    /// An admin set or cleared a pin's publish window.
    public static let pinWindowChanged = AuditAction(rawValue: "pin.window")
    /// A signing pass found pins entering or leaving their publish windows: a new content version.
    public static let pinWindowsApplied = AuditAction(rawValue: "pin.publish")

    public var description: String { rawValue }
}

/// One row of the audit log, written in the same transaction as the change it describes, so the log holds
/// exactly the changes that were committed.
public struct AuditEntry: Hashable, Sendable {
    /// Increasing in commit order; never reused.
    public var id: Int64
    /// When the change was made (stored in UTC, millisecond precision).
    public var at: Date
    /// The OS user who ran the command, or what `--actor` said.
    public var actor: String
    /// The customer name as it was spelled in the store; kept after the customer is removed.
    public var customer: String
    public var action: AuditAction
    /// Human-readable: which host, which pins (base64 SPKI hashes), old and new values.
    public var details: String
    /// The customer's content version after the change; 0 when the change removed the customer.
    public var version: Int64

    public init(id: Int64, at: Date, actor: String, customer: String, action: AuditAction, details: String, version: Int64) {
        self.id = id
        self.at = at
        self.actor = actor
        self.customer = customer
        self.action = action
        self.details = details
        self.version = version
    }
}
