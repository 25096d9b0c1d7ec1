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
            try PinSetLoader.load(db, .named(customer)).first
        }
    }

    /// Every customer's pin set, sorted by customer name, read in one transaction (a consistent snapshot).
    ///
    /// Three set-based queries — customers, hosts, pins — each walking its table in index order, however
    /// many customers there are.
    public func allPinSets() throws -> [PinSet] {
        try database.read { db in
            try PinSetLoader.load(db, .all)
        }
    }

    /// Up to `limit` customers' pin sets, those after `cursor` (from the start without one) in the store's own
    /// order of customers, each page in one transaction; `next` continues after it, `nil` after the last page.
    ///
    /// A server signs a large deployment page by page, so that it never holds every customer's hosts and pins
    /// at once. Pages are separate snapshots: a customer added or removed between two pages may be missed or
    /// seen once more, which the change counter (read before the first page) makes the next change pass pick up.
    public func pinSetPage(after cursor: PinSetPage.Cursor?, limit: Int) throws -> PinSetPage {
        try database.read { db in
            try PinSetLoader.page(after: cursor, limit: limit, db)
        }
    }

    /// Every customer's pin set, as `allPinSets()` returns it, re-reading in full only the customers that are
    /// new or changed since `previous` was read from this store: a server with thousands of customers picks up
    /// one edit without reading every pin. One transaction, like `allPinSets()`.
    public func allPinSets(updating previous: [PinSet]) throws -> [PinSet] {
        try pinSetChanges(since: previous.map(\.header)).applied(to: previous)
    }

    /// Every customer's header, and the hosts and pins only of the customers that are new or whose version,
    /// signer or revocation floor differ from `previous` (headers read earlier from this store). One
    /// transaction, like `allPinSets()`.
    public func pinSetChanges(since previous: [PinSetHeader]) throws -> PinSetChanges {
        try database.read { db in
            try PinSetLoader.changes(since: previous, db)
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
    /// Above this many changed customers, `update` reads everything: one scan then costs less than a long
    /// `IN` list.
    static let maximumPartialReload = 256

    /// Which customers a load reads.
    enum Scope {
        case all
        case named(CustomerName)
        case ids([Int64])
        /// Row ids in `lowerBound...upperBound`.
        case idRange(ClosedRange<Int64>)

        /// The condition on `customer` rows; `nil` for every customer.
        var condition: String? {
            switch self {
            case .all: nil
            case .named: "customer.name = ?"
            case .ids(let ids): "customer.id IN (\(repeatElement("?", count: ids.count).joined(separator: ", ")))"
            case .idRange: "customer.id BETWEEN ? AND ?"
            }
        }

        var arguments: [any SQLArgument] {
            switch self {
            case .all: []
            case .named(let name): [name.rawValue]
            case .ids(let ids): ids
            case .idRange(let range): [range.lowerBound, range.upperBound]
            }
        }
    }

    /// The pin sets of `scope`'s customers, sorted by name (an empty array when there are none).
    /// `pinColumns` and `schemaHasReportOnly`: the schema a migration's follow-up runs against, before later
    /// migrations added columns the loader reads: `StoredRows.pinColumnsBeforeWindows` before `0014_pin_windows`,
    /// and `false` before `0015_host_report_only` added the report-only columns (no host has a window then).
    static func load(
        _ db: any StoreConnection, _ scope: Scope, pinColumns: String = StoredRows.pinColumns, schemaHasReportOnly: Bool = true
    ) throws -> [PinSet] {
        let hostsByCustomer = try hosts(db, scope, pinColumns: pinColumns, schemaHasReportOnly: schemaHasReportOnly)
        var pinSets: [PinSet] = []
        try forEachCustomer(db, scope) { id, pinSet in
            var pinSet = pinSet
            pinSet.hosts = hostsByCustomer[id] ?? []
            pinSets.append(pinSet)
        }
        return pinSets
    }

    /// The hosts of `scope`'s customers with their pins, by customer row id, sorted as `load` returns them.
    static func hosts(
        _ db: any StoreConnection, _ scope: Scope, pinColumns: String = StoredRows.pinColumns, schemaHasReportOnly: Bool = true
    ) throws -> [Int64: [HostPins]] {
        let arguments = scope.arguments
        let hostsOfScope = scope.condition.map { "JOIN customer ON host.customer_id = customer.id WHERE \($0)" } ?? ""

        var pinsByHost: [Int64: [Pin]] = [:]
        var withheldByHost: [Int64: [Pin]] = [:]
        var decoder = StoredRows.PinDecoder()
        try db.forEachRow(scope.condition == nil
            ? "SELECT \(pinColumns) FROM pin"
            : "SELECT \(pinColumns) FROM pin JOIN host ON pin.host_id = host.id \(hostsOfScope)",
            arguments) { row in
            let (hostID, pin, withheld) = try decoder.storedPin(row)
            if withheld {
                withheldByHost[hostID, default: []].append(pin)
            } else {
                pinsByHost[hostID, default: []].append(pin)
            }
        }

        var hostsByCustomer: [Int64: [HostPins]] = [:]
        try db.forEachRow("""
            SELECT \(StoredRows.hostColumns), \(schemaHasReportOnly ? "host.report_only_until" : "NULL") FROM host \(hostsOfScope)
            ORDER BY host.customer_id, host.hostname COLLATE \(db.dialect.binaryCollation)
            """, arguments) { row in
            var (hostID, customerID, host) = try StoredRows.host(row)
            host.reportOnlyUntil = try row.decode(atIndex: 5)
            host.pins = (pinsByHost[hostID] ?? []).sorted { ($0.sortKey?.bytes ?? []).lexicographicallyPrecedes($1.sortKey?.bytes ?? []) }
            if let withheld = withheldByHost[hostID] {
                host.scheduledPins = withheld.sorted { ($0.sortKey?.bytes ?? []).lexicographicallyPrecedes($1.sortKey?.bytes ?? []) }
            }
            hostsByCustomer[customerID, default: []].append(host)
        }
        return hostsByCustomer
    }

    /// The next `limit` customers by row id after `cursor`: one query for the page's last id, then `load` of the
    /// id range, which walks the host and pin indexes of those customers only.
    static func page(after cursor: PinSetPage.Cursor?, limit: Int, _ db: any StoreConnection) throws -> PinSetPage {
        guard limit > 0 else { throw StoreError(.invalidInput, "A page of pin sets needs a limit of at least 1, not \(limit).") }
        let after = cursor?.afterCustomerID ?? Int64.min
        let ids = try db.fetchAll("SELECT id FROM customer WHERE id > ? ORDER BY id LIMIT ?", [after, limit]) { row in
            try row.decode(atIndex: 0) as Int64
        }
        guard let first = ids.first, let last = ids.last else { return PinSetPage(pinSets: [], next: nil) }
        let pinSets = try load(db, .idRange(first...last))
        return PinSetPage(pinSets: pinSets, next: ids.count < limit ? nil : PinSetPage.Cursor(afterCustomerID: last))
    }

    /// Every customer's header as `load(db, .all)` reads it, and the pin sets of the customers that are new or
    /// whose version, signer or revocation floor differ from `previous` (headers read earlier from this store).
    /// Every change to a customer's hosts or pins raises its version in the same transaction (see
    /// `ChangeRecorder`), so an unchanged version means unchanged hosts and pins.
    static func changes(since previous: [PinSetHeader], _ db: any StoreConnection) throws -> PinSetChanges {
        let known = Dictionary(previous.lazy.map { ($0.customer, $0) }, uniquingKeysWith: { first, _ in first })
        var headers: [PinSetHeader] = []
        headers.reserveCapacity(previous.count + 1)
        var changed: [(id: Int64, customer: CustomerName)] = []
        try forEachCustomer(db, .all) { id, pinSet in
            let header = pinSet.header
            if known[header.customer].map(header.differsForSigning(from:)) ?? true {
                changed.append((id, header.customer))
            }
            headers.append(header)
        }
        guard !changed.isEmpty else { return PinSetChanges(headers: headers, pinSets: []) }
        guard changed.count <= maximumPartialReload else { return PinSetChanges(all: try load(db, .all)) }
        let reloaded = try load(db, .ids(changed.map(\.id)))
        // Read in the same transaction as the customer list, so none can be missing; a pin set without hosts in
        // its place would unpin every host of the customer.
        let read = Set(reloaded.lazy.map(\.customer))
        if let missing = changed.first(where: { !read.contains($0.customer) }) {
            throw StoreError(.corruptData, "Customer '\(missing.customer)' was listed but its pin set could not be read in the same transaction.")
        }
        return PinSetChanges(headers: headers, pinSets: reloaded)
    }

    /// Calls `body` with each customer's row id and pin set without hosts, sorted by name.
    ///
    /// The one place that decides which identity signs each customer, and so which revocation floor its
    /// bundles carry: the customer's own identity's, or the default identity's.
    private static func forEachCustomer(_ db: any StoreConnection, _ scope: Scope, _ body: (Int64, PinSet) throws -> Void) throws {
        let defaultFloor = try db.fetchValue(Int64.self, "SELECT signers_not_before FROM default_signing_identity WHERE id = 1")
        try db.forEachRow("""
            SELECT own.customer_id IS NOT NULL, own.signers_not_before, \(StoredRows.customerColumns)
            FROM customer LEFT JOIN customer_signing_identity AS own ON own.customer_id = customer.id
            \(scope.condition.map { "WHERE \($0)" } ?? "")
            ORDER BY customer.name COLLATE \(db.dialect.binaryCollation)
            """, scope.arguments) { row in
            let customer = try StoredRows.customerRow(row, at: 2)
            let hasOwnIdentity: Bool = try row.decode(atIndex: 0)
            let (signer, floor): (SignerAssignment, Int64?) = hasOwnIdentity
                ? (.customerOwn, try row.decode(atIndex: 1) as Int64?)
                : (.deploymentDefault, defaultFloor)
            try body(customer.id, PinSet(
                customer: customer.name, version: customer.version, hosts: [],
                servesLegacyClients: customer.servesLegacyClients, signer: signer, signersNotBefore: floor
            ))
        }
    }
}
