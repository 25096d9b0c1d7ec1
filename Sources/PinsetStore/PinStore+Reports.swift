import Foundation
import PinsetCore

extension PinStore {
    /// Adds `counts` to the stored hourly totals, in one transaction.
    ///
    /// Counts of customers that no longer exist are dropped: their reports were accepted while the customer was
    /// served, and a removed customer keeps no data. Report totals are not pin-set content, so nothing here moves
    /// a content version, the change counter or the audit log.
    ///
    /// - Returns: the number of counts stored.
    @discardableResult
    public func addPinFailureCounts(_ counts: [PinFailureCount]) throws -> Int {
        guard !counts.isEmpty else { return 0 }
        return try database.write { db in
            var customerIDs: [CustomerName: Int64?] = [:]
            var stored = 0
            for count in counts {
                let key = count.key
                let customerID: Int64?
                if let known = customerIDs[key.customer] {
                    customerID = known
                } else {
                    customerID = try db.fetchValue(Int64.self, "SELECT id FROM customer WHERE name = ?", [key.customer.rawValue])
                    customerIDs[key.customer] = customerID
                }
                guard let customerID else { continue }
                // NULL never equals NULL, so the optional columns are compared null-safely in standard SQL.
                let updated = try db.execute("""
                    UPDATE pin_failure_report_hour SET reports = reports + ?
                    WHERE customer_id = ? AND hour = ? AND hostname = ? AND validation_result = ? AND app_version = ?
                      AND leaf_spki_sha256 \(db.dialect.nullSafeEquals) ? AND pinset_version \(db.dialect.nullSafeEquals) ?
                    """, [count.reports, customerID, key.hour, key.hostname, key.validationResult, key.appVersion,
                          key.leafSPKISHA256, key.pinsetVersion])
                if updated == 0 {
                    try db.execute("""
                        INSERT INTO pin_failure_report_hour
                            (customer_id, hour, hostname, validation_result, leaf_spki_sha256, pinset_version, app_version, reports)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """, [customerID, key.hour, key.hostname, key.validationResult, key.leafSPKISHA256,
                              key.pinsetVersion, key.appVersion, count.reports])
                }
                stored += 1
            }
            return stored
        }
    }

    /// Deletes the hourly totals of hours that started before `hour` (Unix seconds).
    ///
    /// - Returns: the number of rows deleted.
    @discardableResult
    public func deletePinFailureCounts(before hour: Int64) throws -> Int {
        try database.write { db in
            try db.execute("DELETE FROM pin_failure_report_hour WHERE hour < ?", [hour])
        }
    }

    /// The hourly totals from the hour that contains `since` (Unix seconds) on, of one customer or all, oldest
    /// first.
    public func pinFailureCounts(of customer: CustomerName? = nil, since: Int64) throws -> [PinFailureCount] {
        try database.read { db in
            var arguments: [any SQLArgument] = [PinFailureCount.hour(containing: since)]
            if let customer { arguments.append(customer.rawValue) }
            return try db.fetchAll("""
                SELECT customer.name, report.hour, report.hostname, report.validation_result, report.leaf_spki_sha256,
                       report.pinset_version, report.app_version, report.reports
                FROM pin_failure_report_hour AS report JOIN customer ON customer.id = report.customer_id
                WHERE report.hour >= ? \(customer == nil ? "" : "AND customer.name = ?")
                ORDER BY customer.name COLLATE \(db.dialect.binaryCollation), report.hostname COLLATE \(db.dialect.binaryCollation), report.hour, report.id
                """, arguments) { row in
                let key = PinFailureCount.Key(
                    customer: try StoredRows.customerName(row.decode(atIndex: 0)),
                    hour: try row.decode(atIndex: 1),
                    hostname: try row.decode(atIndex: 2),
                    validationResult: try row.decode(atIndex: 3),
                    leafSPKISHA256: try row.decode(atIndex: 4),
                    pinsetVersion: try row.decode(atIndex: 5),
                    appVersion: try row.decode(atIndex: 6)
                )
                return PinFailureCount(key: key, reports: try row.decode(atIndex: 7))
            }
        }
    }
}
