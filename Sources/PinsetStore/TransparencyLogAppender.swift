import Foundation
import PinsetCore
import PinsetTransparency

/// Appends entries to the transparency log inside a write transaction: the entry row and every perfect-subtree
/// hash the new leaf completes (see `0013_transparency_log.sql`).
///
/// The next index is the log's size read inside the transaction, and every write transaction holds the store's
/// write lock (SQLite's single writer; PostgreSQL's advisory lock, see `PostgresDatabase`), so two writers,
/// whichever hosts they run on, never read the same size: indices stay dense and the tree never forks. The primary
/// keys refuse a second row at an index or node even if that lock were bypassed, and the append-only triggers
/// refuse any rewrite.
///
/// Only the right edge of the tree is needed to append: the perfect subtrees a tree of `size` leaves folds into
/// (one per set bit of `size`). They are read once, so a migration or a restore that appends thousands of entries
/// reads nothing per entry and writes the rows in batches. Not thread-safe; lives inside one transaction.
struct TransparencyLogAppender {
    /// The number of entries, including those appended but not yet flushed.
    private(set) var size: UInt64
    /// The perfect subtrees of the current tree, largest (leftmost) first.
    private var rightEdge: [(position: MerkleNodePosition, hash: MerkleHash)]
    private var pendingEntries: [SQLValue] = []
    private var pendingHashes: [SQLValue] = []

    /// Entry rows per `INSERT`: six values each, under SQLite's 999 bound values per statement.
    private static let entriesPerInsert = 150
    /// Hash rows per `INSERT`: three values each.
    private static let hashesPerInsert = 300

    /// Reads the log's size and right edge.
    init(_ db: any StoreConnection) throws {
        size = try Self.storedSize(db)
        let positions = TreeHead.plan(forSize: size).positions
        let hashes = try StoredMerkleHashes(db: db).hashes(at: positions)
        rightEdge = Array(zip(positions, hashes))
    }

    /// The number of entries the log holds: its entries' indices are exactly `0..<size`.
    static func storedSize(_ db: any StoreConnection) throws -> UInt64 {
        let next = try db.fetchValue(Int64.self, "SELECT coalesce(max(log_index) + 1, 0) FROM transparency_log_entry") ?? 0
        guard let size = UInt64(exactly: next) else {
            throw StoreError(.corruptData, "The transparency log's largest index is negative. The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
        }
        return size
    }

    /// Queues `entry` as leaf `size` and the hashes it completes; returns its index. Rows reach the database at
    /// the next `flush`, which must run before the transaction commits.
    @discardableResult
    mutating func append(_ entry: PinSetLogEntry, at now: Date, _ db: any StoreConnection) throws -> UInt64 {
        try append(entry, leafData: entry.encoded(), at: now, db)
    }

    /// `append` with the entry's encoding already at hand: bytes carried from another database are appended as
    /// they are, after `PinSetLogEntry(encoded:)` accepted them, so the carried leaf hashes stay the same.
    @discardableResult
    mutating func append(_ entry: PinSetLogEntry, leafData: [UInt8], at now: Date, _ db: any StoreConnection) throws -> UInt64 {
        let index = size
        let leafHash = TreeHasher.leafHash(ofEntry: leafData)
        pendingEntries += [
            .integer(Int64(index)), .text(entry.customer.rawValue), .integer(entry.version), .blob(leafData), .blob(leafHash.bytes), now.sqlValue,
        ]
        // A node is complete once its right child is: climb while the new node is a right child, folding in the
        // left sibling, which is the smallest perfect subtree of the right edge.
        var node = (position: try MerkleNodePosition(level: 0, index: index), hash: leafHash)
        queueHash(node)
        while node.position.index & 1 == 1 {
            guard let left = rightEdge.popLast(), left.position.level == node.position.level, left.position.index == node.position.index - 1 else {
                throw StoreError(.corruptData, "The transparency log's stored hashes do not match its \(index) entries. The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
            }
            node = (try MerkleNodePosition(level: node.position.level + 1, index: node.position.index >> 1),
                    TreeHasher.nodeHash(left: left.hash, right: node.hash))
            queueHash(node)
        }
        rightEdge.append(node)
        size += 1
        if pendingEntries.count >= Self.entriesPerInsert * 6 || pendingHashes.count >= Self.hashesPerInsert * 3 {
            try flush(db)
        }
        return index
    }

    private mutating func queueHash(_ node: (position: MerkleNodePosition, hash: MerkleHash)) {
        pendingHashes += [.integer(Int64(node.position.level)), .integer(Int64(node.position.index)), .blob(node.hash.bytes)]
    }

    /// Writes the queued rows.
    mutating func flush(_ db: any StoreConnection) throws {
        if !pendingEntries.isEmpty {
            let rows = Array(repeating: "(?, ?, ?, ?, ?, ?)", count: pendingEntries.count / 6).joined(separator: ", ")
            try db.execute("INSERT INTO transparency_log_entry (log_index, customer, version, leaf_data, leaf_hash, appended_at) VALUES \(rows)", pendingEntries)
            pendingEntries.removeAll(keepingCapacity: true)
        }
        if !pendingHashes.isEmpty {
            let rows = Array(repeating: "(?, ?, ?)", count: pendingHashes.count / 3).joined(separator: ", ")
            try db.execute("INSERT INTO transparency_log_hash (level, node_index, hash) VALUES \(rows)", pendingHashes)
            pendingHashes.removeAll(keepingCapacity: true)
        }
    }
}

extension TransparencyLogAppender {
    /// Appends the entry of a customer's content at `version`, which the transaction has just given it: the one
    /// place a write logs a version, called by `ChangeRecorder`. The content is read inside the transaction, after
    /// the change, so the entry holds what the bundles of this version publish.
    static func appendVersion(_ version: Int64, ofCustomerID customerID: Int64, named name: CustomerName, at now: Date, _ db: any StoreConnection) throws {
        let hosts = try PinSetLoader.hosts(db, .ids([customerID]))[customerID] ?? []
        var appender = try TransparencyLogAppender(db)
        try appender.append(try logEntry(of: PinSet(customer: name, version: version, hosts: hosts)), at: now, db)
        try appender.flush(db)
    }

    /// Whether the log has the entry of `customer` (matched ignoring case) at `version`.
    static func hasEntry(of customer: CustomerName, version: Int64, _ db: any StoreConnection) throws -> Bool {
        try db.fetchValue(Bool.self, "SELECT EXISTS (SELECT 1 FROM transparency_log_entry WHERE customer = ? AND version = ?)",
                          [customer.rawValue, version]) ?? false
    }

    /// Appends every customer's current content version, in name order: a database that had customers before it
    /// had a log gets a complete one (run by migration `0013_transparency_log`, in its transaction).
    static func appendEveryCurrentVersion(at now: Date, _ db: any StoreConnection) throws {
        var appender = try TransparencyLogAppender(db)
        // The schema as 0013 leaves it: no pin has a publish window (0014), no host a report-only window (0015).
        for pinSet in try PinSetLoader.load(db, .all, pinColumns: StoredRows.pinColumnsBeforeWindows, schemaHasReportOnly: false) {
            try appender.append(try logEntry(of: pinSet), at: now, db)
        }
        try appender.flush(db)
    }

    static func logEntry(of pinSet: PinSet) throws -> PinSetLogEntry {
        do {
            return try PinSetLogEntry(pinSet: pinSet)
        } catch {
            throw StoreError(.corruptData, "Customer '\(pinSet.customer)' has version \(pinSet.version), which no log entry can hold: \(error.message)")
        }
    }
}
