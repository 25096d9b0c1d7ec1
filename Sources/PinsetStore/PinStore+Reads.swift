import Foundation
import PinsetCore

extension PinStore {
    /// Every customer with its content version and host and pin counts, sorted by name.
    public func customers() throws -> [CustomerSummary] {
        try database.read { db in
            try db.fetchAll("""
                SELECT customer.name, customer.version, customer.created_at, customer.updated_at,
                       coalesce(hosts.count, 0), coalesce(pins.count, 0), customer.legacy_clients
                FROM customer
                LEFT JOIN (SELECT customer_id, count(*) AS count FROM host GROUP BY customer_id) AS hosts
                       ON hosts.customer_id = customer.id
                LEFT JOIN (SELECT host.customer_id, count(*) AS count FROM pin JOIN host ON pin.host_id = host.id GROUP BY host.customer_id) AS pins
                       ON pins.customer_id = customer.id
                ORDER BY customer.name COLLATE \(db.dialect.binaryCollation)
                """) { row in
                CustomerSummary(
                    name: try StoredRows.customerName(row.decode(atIndex: 0)),
                    version: try row.decode(atIndex: 1),
                    hostCount: try row.decode(atIndex: 4),
                    pinCount: try row.decode(atIndex: 5),
                    servesLegacyClients: try row.decode(atIndex: 6),
                    createdAt: try row.decode(atIndex: 2),
                    updatedAt: try row.decode(atIndex: 3)
                )
            }
        }
    }

    /// The customer's pin set, or `nil` if there is no such customer. The name is matched ignoring case;
    /// the result carries the name as stored.
    ///
    /// Hosts are sorted by host name and each host's pins by SPKI hash, so equal content compares equal.
    public func pinSet(for customer: CustomerName) throws -> PinSet? {
        try database.read { db in
            try PinSetLoader.load(db, customer: customer).first
        }
    }

    /// Every customer's pin set, sorted by customer name, read in one transaction (a consistent snapshot).
    ///
    /// Three set-based queries — customers, hosts, pins — each walking its table in index order, however
    /// many customers there are.
    public func allPinSets() throws -> [PinSet] {
        try database.read { db in
            try PinSetLoader.load(db, customer: nil)
        }
    }

    /// The global change counter: increased by every committed change. A server polls it to learn cheaply
    /// whether anything needs re-signing; it never decreases and is never reset.
    public func changeCounter() throws -> Int64 {
        try database.read { db in
            try db.fetchValue(Int64.self, "SELECT value FROM change_counter WHERE id = 1") ?? 0
        }
    }

    /// The latest audit entries, newest first: all customers', or those of one customer name (ignoring case,
    /// including entries from before the customer was removed and re-added).
    public func auditLog(customer: CustomerName? = nil, limit: Int = 100) throws -> [AuditEntry] {
        try database.read { db in
            let columns = "id, at, actor, customer, action, details, version"
            let (sql, arguments): (String, [any SQLArgument]) = if let customer {
                ("SELECT \(columns) FROM audit_log WHERE customer = ? ORDER BY id DESC LIMIT ?", [customer.rawValue, max(limit, 0)])
            } else {
                ("SELECT \(columns) FROM audit_log ORDER BY id DESC LIMIT ?", [max(limit, 0)])
            }
            return try db.fetchAll(sql, arguments) { row in
                AuditEntry(
                    id: try row.decode(atIndex: 0), at: try row.decode(atIndex: 1), actor: try row.decode(atIndex: 2),
                    customer: try row.decode(atIndex: 3),
                    action: AuditAction(rawValue: try row.decode(atIndex: 4)), details: try row.decode(atIndex: 5),
                    version: try row.decode(atIndex: 6)
                )
            }
        }
    }
}

/// Loads pin sets with one query per table, whatever the number of customers.
///
/// Pins are read in table order and sorted per host in memory: walking the `(host_id, spki_sha256)` index
/// instead costs a table lookup per pin, about three times the whole scan.
enum PinSetLoader {
    /// All customers' pin sets (sorted by name), or the one customer's (an empty array when it does not exist).
    static func load(_ db: any StoreConnection, customer: CustomerName?) throws -> [PinSet] {
        let onlyCustomer = "JOIN customer ON host.customer_id = customer.id WHERE customer.name = ?"
        let arguments: [any SQLArgument] = customer.map { [$0.rawValue] } ?? []

        var pinsByHost: [Int64: [Pin]] = [:]
        var decoder = StoredRows.PinDecoder()
        try db.forEachRow(customer == nil
            ? "SELECT \(StoredRows.pinColumns) FROM pin"
            : "SELECT \(StoredRows.pinColumns) FROM pin JOIN host ON pin.host_id = host.id \(onlyCustomer)",
            arguments) { row in
            let (hostID, pin) = try decoder.pin(row)
            pinsByHost[hostID, default: []].append(pin)
        }

        var hostsByCustomer: [Int64: [HostPins]] = [:]
        try db.forEachRow("""
            SELECT \(StoredRows.hostColumns) FROM host \(customer == nil ? "" : onlyCustomer) ORDER BY host.customer_id, host.hostname COLLATE \(db.dialect.binaryCollation)
            """, arguments) { row in
            var (hostID, customerID, host) = try StoredRows.host(row)
            host.pins = (pinsByHost[hostID] ?? []).sorted { ($0.sortKey?.bytes ?? []).lexicographicallyPrecedes($1.sortKey?.bytes ?? []) }
            hostsByCustomer[customerID, default: []].append(host)
        }

        // The one place that decides which identity signs each customer, and so which revocation floor its
        // bundles carry: the customer's own identity's, or the default identity's.
        var ownSigners: [Int64: Int64?] = [:]
        try db.forEachRow(customer == nil
            ? "SELECT customer_id, signers_not_before FROM customer_signing_identity"
            : "SELECT customer_id, signers_not_before FROM customer_signing_identity JOIN customer ON customer.id = customer_id WHERE customer.name = ?",
            arguments) { row in
            ownSigners[try row.decode(atIndex: 0) as Int64] = try row.decode(atIndex: 1) as Int64?
        }
        let defaultFloor = try db.fetchValue(Int64.self, "SELECT signers_not_before FROM default_signing_identity WHERE id = 1")

        var pinSets: [PinSet] = []
        try db.forEachRow("""
            SELECT \(StoredRows.customerColumns) FROM customer \(customer == nil ? "" : "WHERE customer.name = ?")
            ORDER BY customer.name COLLATE \(db.dialect.binaryCollation)
            """, arguments) { row in
            let customer = try StoredRows.customerRow(row)
            let (signer, floor): (SignerAssignment, Int64?) = switch ownSigners[customer.id] {
            case .some(let ownFloor): (.customerOwn, ownFloor)
            case .none: (.deploymentDefault, defaultFloor)
            }
            pinSets.append(PinSet(
                customer: customer.name, version: customer.version, hosts: hostsByCustomer[customer.id] ?? [],
                servesLegacyClients: customer.servesLegacyClients, signer: signer, signersNotBefore: floor
            ))
        }
        return pinSets
    }
}
