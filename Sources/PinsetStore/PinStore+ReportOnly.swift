import Foundation
import PinsetCore

/// A host in report-only mode: until `until`, Pinset clients report a pin mismatch and let the connection
/// proceed after normal TLS validation. See docs/report-only.md.
public struct ReportOnlyWindow: Hashable, Sendable {
    public var customer: CustomerName
    public var hostname: Hostname
    /// Unix seconds; the bundle's `report-only-until`.
    public var until: Int64
    public var reason: String
    /// The admin who set it (for a reviewed request: the author, approved by the reviewer named in the audit log).
    public var setBy: String
    public var since: Date

    public init(customer: CustomerName, hostname: Hostname, until: Int64, reason: String, setBy: String, since: Date) {
        self.customer = customer
        self.hostname = hostname
        self.until = until
        self.reason = reason
        self.setBy = setBy
        self.since = since
    }

    public var untilDate: Date { Date(timeIntervalSince1970: TimeInterval(until)) }
}

extension PinStore {
    /// The actor the audit log names for a window ended because its time passed.
    public static let reportOnlyExpiryActor = "pinset (report-only window over)"

    /// Puts `hostname` in report-only mode until `until` (Unix seconds), replacing any window it had. A change
    /// of content: the customer gets a new version, logged and audited with `reason`.
    ///
    /// The store holds the hard bounds whoever calls it: the window must end after now and at most
    /// `maximumSeconds` (never more than `BundleBounds.maximumReportOnlySeconds`) from now, and the reason follows
    /// the rule of every reason an admin writes. Who may set it is the caller's rule (`Admin.setReportOnly`).
    ///
    /// - Returns: the new version.
    @discardableResult
    public func setReportOnly(
        _ hostname: Hostname, of customer: CustomerName, until: Int64, reason: String,
        maximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds, actor: String, approvedBy: String? = nil
    ) throws -> Int64 {
        let reason = try Self.validatedReviewText(reason, what: "reason for the report-only window (e.g. --reason 'renewal served an unpinned key, INC-4711')", required: true)
        let now = clock()
        try Self.checkReportOnlyEnd(until, now: now, maximumSeconds: maximumSeconds)
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: now)
            return try change.setReportOnly(hostname, of: customer, until: until, reason: reason, setBy: actor, approvedBy: approvedBy)
        }
    }

    /// Ends the host's report-only window now: it enforces again from the next bundle. `nil` when it had none
    /// (nothing changes), else the new version.
    @discardableResult
    public func endReportOnly(_ hostname: Hostname, of customer: CustomerName, reason: String?, actor: String) throws -> Int64? {
        let reason = try reason.map { try Self.validatedReviewText($0, what: "reason for ending the report-only window", required: false) }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            let current = try db.fetchValue(Int64.self, "SELECT report_only_until FROM host WHERE id = ?", [hostID])
            guard current != nil else { return nil }
            try Self.clearReportOnly(hostID: hostID, db)
            let why = reason.flatMap { $0.isEmpty ? nil : ": \($0)" } ?? ""
            return try change.recordChange(of: owner, .reportOnlyEnded, "\(hostname): enforcing again (report-only ended early)\(why)")
        }
    }

    /// Ends every window whose end is at or before `time`, each customer's in one change (a new version, an audit
    /// entry per host under `reportOnlyExpiryActor`). Checks with one indexed query first and writes only when a
    /// window has ended, so the server's refresher calls it on every poll. Returns how many windows it ended.
    @discardableResult
    public func endReportOnlyWindows(endingBy time: Date) throws -> Int {
        let seconds = Int64(time.timeIntervalSince1970.rounded(.down))
        let due = try database.read { db in
            try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM host WHERE report_only_until <= ?)", [seconds]) ?? false
        }
        guard due else { return 0 }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: Self.reportOnlyExpiryActor, now: time)
            let ended = try db.fetchAll("""
                SELECT host.id, host.customer_id, coalesce(host.published_hostname, host.hostname), host.report_only_until
                FROM host WHERE host.report_only_until <= ? ORDER BY host.customer_id, host.hostname
                """, [seconds]) { row in
                (hostID: try row.decode(atIndex: 0) as Int64, customerID: try row.decode(atIndex: 1) as Int64,
                 hostname: try row.decode(atIndex: 2) as String, until: try row.decode(atIndex: 3) as Int64)
            }
            var byCustomer: [Int64: [String]] = [:]
            for window in ended {
                try Self.clearReportOnly(hostID: window.hostID, db)
                byCustomer[window.customerID, default: []].append(
                    "\(window.hostname): enforcing again (the report-only window ended at \(StoredDate.format(Date(timeIntervalSince1970: TimeInterval(window.until)))) UTC)"
                )
            }
            for (customerID, lines) in byCustomer.sorted(by: { $0.key < $1.key }) {
                guard let owner = try change.customer(id: customerID) else { continue }
                try change.recordChange(of: owner, .reportOnlyEnded, lines.joined(separator: "\n"))
            }
            return ended.count
        }
    }

    /// The hosts in report-only mode, of one customer or all, by customer and host name. A window whose end has
    /// passed is listed until it is ended (the server does that within a second).
    public func reportOnlyWindows(of customer: CustomerName? = nil) throws -> [ReportOnlyWindow] {
        try database.read { db in
            try db.fetchAll("""
                SELECT customer.name, coalesce(host.published_hostname, host.hostname), host.report_only_until, host.report_only_reason,
                       host.report_only_by, host.report_only_since
                FROM host JOIN customer ON customer.id = host.customer_id
                WHERE host.report_only_until IS NOT NULL \(customer == nil ? "" : "AND customer.name = ?")
                ORDER BY customer.name COLLATE \(db.dialect.binaryCollation), host.hostname COLLATE \(db.dialect.binaryCollation)
                """, customer.map { [$0.rawValue] } ?? []) { row in
                let stored: String = try row.decode(atIndex: 1)
                guard let hostname = try? Hostname(stored) else {
                    throw StoreError(.corruptData, "The stored host name '\(stored)' is not valid. Fix or remove the row with the database's own tool (sqlite3 or psql).")
                }
                return ReportOnlyWindow(
                    customer: try StoredRows.customerName(row.decode(atIndex: 0)), hostname: hostname,
                    until: try row.decode(atIndex: 2), reason: try row.decode(atIndex: 3), setBy: try row.decode(atIndex: 4),
                    since: try row.decode(atIndex: 5)
                )
            }
        }
    }

    /// Why a window ending at `until` cannot be set at `now` with at most `maximumSeconds`, as a thrown `invalidInput`.
    static func checkReportOnlyEnd(_ until: Int64, now: Date, maximumSeconds: Int64) throws {
        let bound = min(maximumSeconds, BundleBounds.maximumReportOnlySeconds)
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        guard until > nowSeconds else {
            throw StoreError(.reportOnlyRefused, "The report-only window would end at \(until) (Unix seconds), which is not after now (\(nowSeconds)). Give a time in the future, e.g. --until 12h.")
        }
        guard until - nowSeconds <= bound else {
            throw StoreError(.reportOnlyRefused, "The report-only window would last \(until - nowSeconds) s; the limit is \(bound) s (\(bound / 3600) h). Give an earlier end, and set a new window when it ends if still needed.")
        }
    }

    private static func clearReportOnly(hostID: Int64, _ db: any StoreConnection) throws {
        try db.execute(
            "UPDATE host SET report_only_until = NULL, report_only_reason = NULL, report_only_by = NULL, report_only_since = NULL WHERE id = ?", [hostID]
        )
    }
}

extension ChangeRecorder {
    /// `PinStore.setReportOnly` inside a transaction that is already open, its reason and end checked: `setBy`
    /// is who asked for the window (a change request's author), `approvedBy` the reviewer who approved it.
    func setReportOnly(_ hostname: Hostname, of customer: CustomerName, until: Int64, reason: String, setBy: String, approvedBy: String?) throws -> Int64 {
        let owner = try self.customer(customer)
        let (hostID, _) = try host(hostname, of: owner)
        try db.execute(
            "UPDATE host SET report_only_until = ?, report_only_reason = ?, report_only_by = ?, report_only_since = ? WHERE id = ?",
            [until, reason, setBy, now, hostID]
        )
        let approval = approvedBy.map { ", approved by \($0)" } ?? ""
        return try recordChange(
            of: owner, .reportOnlySet,
            "\(hostname): report-only until \(StoredDate.format(Date(timeIntervalSince1970: TimeInterval(until)))) UTC\(approval): \(reason)"
        )
    }
}
