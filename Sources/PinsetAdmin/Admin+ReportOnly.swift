import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetStore

/// A host's report-only window (docs/report-only.md): the switch for the night a host's pins and its live chain
/// disagree. Setting one switches pinning off for the host in every Pinset client for up to the configured
/// maximum, so it is an operator's, always with a reason; ending one early only restores enforcement, so an editor
/// of the customer may.
extension Admin {
    /// Puts `hostname` in report-only mode until `until` (Unix seconds), at most `maximumSeconds` from now (the
    /// server's `reportOnlyMaximumHours`, never above `BundleBounds.maximumReportOnlySeconds`). Returns the new
    /// version, the first whose bundles announce the window.
    @discardableResult
    public func setReportOnly(
        _ hostname: Hostname, of customer: CustomerName, until: Int64, reason: String,
        maximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds, by principal: AdminPrincipal
    ) throws -> Int64 {
        try requireOperator(
            principal, of: customer,
            "switch \(hostname) to report-only (every Pinset client would stop enforcing its pins until the window ends)"
        )
        return try store.setReportOnly(hostname, of: customer, until: until, reason: reason, maximumSeconds: maximumSeconds, actor: principal.actor)
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
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: trimmed) else {
            throw AdminError("--until '\(TerminalText.escape(text))' is neither a duration (e.g. 12h) nor an ISO 8601 time with a zone (e.g. 2026-11-28T06:00:00Z).")
        }
        return Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
