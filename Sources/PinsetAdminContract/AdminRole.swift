/// What a named admin may do for a customer, or for all of them.
public enum AdminRole: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Reads pins, requests, reports, uptake and the audit log.
    case viewer
    /// Proposes pin edits (applied at once on a customer that does not require review).
    case editor
    /// Approves or rejects other admins' change requests.
    case reviewer
    /// Deployment-wide: manages admins and review policy, and may apply an edit without review (break-glass).
    case `operator`

    public static func < (lhs: AdminRole, rhs: AdminRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
