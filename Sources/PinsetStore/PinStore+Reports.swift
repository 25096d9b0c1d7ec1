import Foundation
import PinsetCore

/// Reports of one customer and hour that got no row of their own: counted, so that totals stay exact, but kept
/// out of `pin_failure_report_hour` so that a flood of distinct reports cannot grow it without bound.
public struct PinFailureBucket: Hashable, Sendable {
    public var customer: CustomerName
    /// Start of the UTC hour, in seconds since 1970.
    public var hour: Int64
    /// Reports of kinds first seen after the hour already held the row cap.
    public var otherReports: Int64
    /// Reports naming a host the customer does not pin.
    public var unpublishedHostReports: Int64

    public init(customer: CustomerName, hour: Int64, otherReports: Int64, unpublishedHostReports: Int64) {
        self.customer = customer
        self.hour = hour
        self.otherReports = otherReports
        self.unpublishedHostReports = unpublishedHostReports
    }
}

extension PinStore {
    /// Distinct rows one customer may have in one hour unless the server configures another cap; reports of new
    /// kinds beyond it are counted in the hour's "other" bucket.
    public static let defaultMaximumReportRowsPerCustomerHour = 1_000

    /// Adds `counts` to the stored hourly totals, in one transaction.
    ///
    /// The transaction holds the database's write lock, which admin edits wait for: callers pass small batches
    /// (the server's report writer passes at most a few hundred counts). Every statement is an indexed
    /// lookup (`pin_failure_report_hour_key`, migration 0008), so the cost of a batch does not grow with the rows
    /// stored. A count whose host the customer does not pin (neither the host itself nor an include-subdomains
    /// parent) is added to the hour's unpublished-host bucket; a count of a new kind when the customer's hour
    /// already holds `maximumRowsPerCustomerHour` rows is added to its "other" bucket. Counts of customers that no
    /// longer exist are dropped: a removed customer keeps no data. Report totals are not pin-set content, so
    /// nothing here moves a content version, the change counter or the audit log.
    ///
    /// - Returns: the number of counts stored (in rows or buckets).
    @discardableResult
    public func addPinFailureCounts(_ counts: [PinFailureCount],
                                    maximumRowsPerCustomerHour: Int = defaultMaximumReportRowsPerCustomerHour) throws -> Int {
        guard !counts.isEmpty else { return 0 }
        return try database.write { db in
            var writer = ReportCountWriter(db: db, maximumRows: maximumRowsPerCustomerHour)
            return try writer.add(counts)
        }
    }

    /// Deletes the hourly totals and buckets of hours that started before `hour` (Unix seconds).
    ///
    /// - Returns: the number of rows of hourly totals deleted.
    @discardableResult
    public func deletePinFailureCounts(before hour: Int64) throws -> Int {
        try database.write { db in
            try db.execute("DELETE FROM pin_failure_report_bucket WHERE hour < ?", [hour])
            return try db.execute("DELETE FROM pin_failure_report_hour WHERE hour < ?", [hour])
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

    /// The "other" and unpublished-host buckets from the hour that contains `since` on, of one customer or all,
    /// oldest first; only hours where either is not zero.
    public func pinFailureBuckets(of customer: CustomerName? = nil, since: Int64) throws -> [PinFailureBucket] {
        try database.read { db in
            var arguments: [any SQLArgument] = [PinFailureCount.hour(containing: since)]
            if let customer { arguments.append(customer.rawValue) }
            return try db.fetchAll("""
                SELECT customer.name, bucket.hour, bucket.other_reports, bucket.unpublished_host_reports
                FROM pin_failure_report_bucket AS bucket JOIN customer ON customer.id = bucket.customer_id
                WHERE bucket.hour >= ? AND (bucket.other_reports > 0 OR bucket.unpublished_host_reports > 0)
                  \(customer == nil ? "" : "AND customer.name = ?")
                ORDER BY customer.name COLLATE \(db.dialect.binaryCollation), bucket.hour
                """, arguments) { row in
                PinFailureBucket(customer: try StoredRows.customerName(row.decode(atIndex: 0)), hour: try row.decode(atIndex: 1),
                                 otherReports: try row.decode(atIndex: 2), unpublishedHostReports: try row.decode(atIndex: 3))
            }
        }
    }
}

/// One batch of ``PinStore/addPinFailureCounts(_:maximumRowsPerCustomerHour:)`` inside its write transaction.
///
/// What a batch needs beyond the rows themselves (a customer's id and hosts, an hour's row count and buckets) is
/// read once per batch and the buckets written once at its end, so a batch costs one indexed statement per count.
private struct ReportCountWriter {
    struct Scope {
        var customerID: Int64
        var hosts: [(name: Hostname, includeSubdomains: Bool)]

        func publishes(_ reported: String) -> Bool {
            guard let name = try? Hostname(reported) else { return false }
            return hosts.contains { name.isCovered(by: $0.name, includeSubdomains: $0.includeSubdomains) }
        }
    }

    struct HourKey: Hashable {
        var customerID: Int64
        var hour: Int64
    }

    struct Bucket {
        var storedRows: Int64
        var otherReports: Int64
        var unpublishedHostReports: Int64
    }

    let db: any StoreConnection
    let maximumRows: Int
    var scopes: [CustomerName: Scope?] = [:]
    var buckets: [HourKey: Bucket] = [:]

    init(db: any StoreConnection, maximumRows: Int) {
        self.db = db
        self.maximumRows = max(0, maximumRows)
    }

    mutating func add(_ counts: [PinFailureCount]) throws -> Int {
        var stored = 0
        for count in counts {
            guard let scope = try scope(of: count.key.customer) else { continue }
            let hourKey = HourKey(customerID: scope.customerID, hour: count.key.hour)
            var bucket = try bucket(hourKey)
            if !scope.publishes(count.key.hostname) {
                bucket.unpublishedHostReports += count.reports
            } else if try !addToRow(count, customerID: scope.customerID) {
                if bucket.storedRows < Int64(maximumRows) {
                    try insertRow(count, customerID: scope.customerID)
                    bucket.storedRows += 1
                } else {
                    bucket.otherReports += count.reports
                }
            }
            buckets[hourKey] = bucket
            stored += 1
        }
        for (key, bucket) in buckets {
            try db.execute("""
                INSERT INTO pin_failure_report_bucket (customer_id, hour, stored_rows, other_reports, unpublished_host_reports)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (customer_id, hour) DO UPDATE SET stored_rows = excluded.stored_rows,
                    other_reports = excluded.other_reports, unpublished_host_reports = excluded.unpublished_host_reports
                """, [key.customerID, key.hour, bucket.storedRows, bucket.otherReports, bucket.unpublishedHostReports])
        }
        return stored
    }

    private mutating func scope(of customer: CustomerName) throws -> Scope? {
        if let known = scopes[customer] { return known }
        var scope: Scope?
        if let id = try db.fetchValue(Int64.self, "SELECT id FROM customer WHERE name = ?", [customer.rawValue]) {
            let hosts = try db.fetchAll("SELECT hostname, include_subdomains FROM host WHERE customer_id = ?", [id]) { row in
                (name: try row.decode(String.self, atIndex: 0), includeSubdomains: try row.decode(Bool.self, atIndex: 1))
            }
            // A stored name that is not a host name (edited by hand) publishes nothing rather than failing the batch.
            scope = Scope(customerID: id, hosts: hosts.compactMap { host in
                (try? Hostname(host.name)).map { (name: $0, includeSubdomains: host.includeSubdomains) }
            })
        }
        scopes[customer] = scope
        return scope
    }

    private func bucket(_ key: HourKey) throws -> Bucket {
        if let known = buckets[key] { return known }
        return try db.fetchOne("""
            SELECT stored_rows, other_reports, unpublished_host_reports FROM pin_failure_report_bucket
            WHERE customer_id = ? AND hour = ?
            """, [key.customerID, key.hour]) { row in
            Bucket(storedRows: try row.decode(atIndex: 0), otherReports: try row.decode(atIndex: 1), unpublishedHostReports: try row.decode(atIndex: 2))
        } ?? Bucket(storedRows: 0, otherReports: 0, unpublishedHostReports: 0)
    }

    /// Adds to the row of the count's key if there is one. The optional columns are compared through the same
    /// expressions as `pin_failure_report_hour_key` indexes, which is what lets both databases use that index.
    private func addToRow(_ count: PinFailureCount, customerID: Int64) throws -> Bool {
        let key = count.key
        return try db.execute("""
            UPDATE pin_failure_report_hour SET reports = reports + ?
            WHERE customer_id = ? AND hour = ? AND hostname = ? AND validation_result = ?
              AND coalesce(leaf_spki_sha256, '') = ? AND coalesce(pinset_version, 0) = ? AND app_version = ?
            """, [count.reports, customerID, key.hour, key.hostname, key.validationResult, key.leafSPKISHA256 ?? "",
                  key.pinsetVersion ?? 0, key.appVersion]) > 0
    }

    private func insertRow(_ count: PinFailureCount, customerID: Int64) throws {
        let key = count.key
        try db.execute("""
            INSERT INTO pin_failure_report_hour
                (customer_id, hour, hostname, validation_result, leaf_spki_sha256, pinset_version, app_version, reports)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [customerID, key.hour, key.hostname, key.validationResult, key.leafSPKISHA256, key.pinsetVersion,
                  key.appVersion, count.reports])
    }
}
