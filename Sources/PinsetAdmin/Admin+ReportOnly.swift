import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetStore

/// What became of a request to put a host in report-only mode.
public enum ReportOnlyOutcome: Sendable {
    /// Set at once, by an operator: the new version, the first whose bundles announce the window.
    case applied(version: Int64)
    /// An editor's request on a customer that requires review: the window is set when a reviewer approves it.
    case requested(ChangeRequest)
}

/// A host's report-only window (docs/report-only.md): the switch for the night a host's pins and its live chain
/// disagree. Setting one switches pinning off for the host in every Pinset client for up to the configured
/// maximum, so it takes an operator, or an editor and a reviewer where the customer requires review, always with
/// a reason; ending one early only restores enforcement, so an editor of the customer may.
extension Admin {
    /// Puts `hostname` in report-only mode until `until` (Unix seconds), at most `maximumSeconds` from now (the
    /// server's `reportOnlyMaximumHours`, never above `BundleBounds.maximumReportOnlySeconds`): at once for an
    /// operator; as a change request, which expires when the window would have ended, for an editor of a customer
    /// that requires review.
    @discardableResult
    public func setReportOnly(
        _ hostname: Hostname, of customer: CustomerName, until: Int64, reason: String,
        maximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds, by principal: AdminPrincipal
    ) throws -> ReportOnlyOutcome {
        let what = "switch \(hostname) to report-only (every Pinset client would stop enforcing its pins until the window ends)"
        if let account = principal.account, !account.isOperator {
            try requireEditor(principal, of: customer, what)
            // The editor's role admits the call; what refuses it is the customer's setting, which an operator may change.
            guard try store.requiresReview(customer) else {
                throw AdminError("Admin \(account.name) may not \(what) of '\(customer)': an operator may, or an editor where the customer requires review, whose request a reviewer then approves ('pinset admin require-review \(customer)'). Nothing was changed. Ask an operator.", kind: .refused)
            }
            // Open no longer than the window it asks for: approved after its end, it would set nothing.
            let lifetime = min(max(TimeInterval(until) - store.now().timeIntervalSince1970, 60), PinStore.maximumChangeRequestLifetime)
            return .requested(try store.createChangeRequest(
                for: customer, edits: [PinEdit(hostname: hostname, operation: .setReportOnly(until: until))], reason: reason, lifetime: lifetime,
                author: account.name, authorToken: account.token, reportOnlyMaximumSeconds: maximumSeconds))
        }
        return .applied(version: try store.setReportOnly(hostname, of: customer, until: until, reason: reason, maximumSeconds: maximumSeconds, actor: principal.actor))
    }

    /// Ends the host's report-only window now, as an editor of the customer. Returns the new version, or `nil`
    /// when the host had no window (nothing changes).
    @discardableResult
    public func endReportOnly(_ hostname: Hostname, of customer: CustomerName, reason: String?, by principal: AdminPrincipal) throws -> Int64? {
        try requireEditor(principal, of: customer, "end the report-only window of \(hostname)")
        return try store.endReportOnly(hostname, of: customer, reason: reason, actor: principal.actor)
    }

    /// The hosts in report-only mode that `viewer` may see: of `customer`, or of every customer it sees.
    public func reportOnlyWindows(of customer: CustomerName?, visibleTo viewer: AdminPrincipal) throws -> [ReportOnlyWindow] {
        if let customer { _ = try pinSet(of: customer, visibleTo: viewer) }
        return try store.reportOnlyWindows(of: customer).filter { viewer.mayView($0.customer) }
    }

    /// The end of a window from what an operator types: a duration from `now` (`90m`, `12h`, `3d`) or an ISO 8601
    /// time with a zone (`2026-11-28T06:00:00Z`). Returns Unix seconds; the bound is the store's to check.
    public static func parseReportOnlyEnd(_ text: String, now: Date) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [Character: Int64] = ["m": 60, "h": 3600, "d": 86_400]
        if let unit = trimmed.last.flatMap({ units[$0] }) {
            let digits = trimmed.dropLast()
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let amount = Int64(digits), amount > 0, amount <= 3650 * 86_400 / unit else {
                throw AdminError("--until '\(TerminalText.escape(text))' is not a duration. Give a positive number followed by m, h or d (e.g. 12h), or a time such as 2026-11-28T06:00:00Z.")
            }
            return Int64(now.timeIntervalSince1970.rounded(.down)) + amount * unit
        }
        guard let date = ISO8601Time.parse(trimmed, dateOnly: false) else {
            throw AdminError("--until '\(TerminalText.escape(text))' is neither a duration (e.g. 12h) nor an existing ISO 8601 time with a zone (e.g. 2026-11-28T06:00:00Z).")
        }
        return Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
