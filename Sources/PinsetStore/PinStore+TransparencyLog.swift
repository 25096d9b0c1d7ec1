import Foundation
import PinsetCore
import PinsetTransparency

/// One entry of the transparency log as the store keeps it.
public struct TransparencyLogRecord: Hashable, Sendable {
    /// The entry's position in the log, from 0.
    public let index: UInt64
    /// The leaf data: a `PinSetLogEntry` encoding, as entry bundles carry it.
    public let leafData: [UInt8]
    /// The time of the write that appended it, as its audit entry has it; not part of the log's hashes.
    public let appendedAt: Date
}

/// The transparency log's stored hashes, each read in its own read transaction.
///
/// Stored hashes never change once written, so answers from separate snapshots fit together: a proof or tile for
/// any tree size up to the size read earlier is read correctly while writers keep appending. Sendable and
/// thread-safe, like its store.
public struct TransparencyLogHashReader: MerkleHashReader, Sendable {
    let store: PinStore

    /// The hashes of the perfect subtrees at `positions`, in order.
    ///
    /// - Throws: `StoreError.invalidInput` when a position lies beyond the log's current tree.
    public func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        try store.database.read { db in try StoredMerkleHashes(db: db).hashes(at: positions) }
    }
}

extension PinStore {
    /// The number of entries in the transparency log. It only grows: every content version a customer is given is
    /// appended in the transaction that gives it, and nothing is ever removed (see `TransparencyLogAppender`).
    public func transparencyLogSize() throws -> UInt64 {
        try database.read { db in try TransparencyLogAppender.storedSize(db) }
    }

    /// The log's current size and root hash, read in one snapshot.
    public func transparencyTreeHead() throws -> TreeHead {
        try database.read { db in
            try TreeHead.compute(size: try TransparencyLogAppender.storedSize(db), from: StoredMerkleHashes(db: db))
        }
    }

    /// The root hash the log had at `size` entries, recomputed from the stored hashes: what a checkpoint of that
    /// size signed.
    ///
    /// - Throws: `StoreError.invalidInput` when the log has fewer than `size` entries.
    public func transparencyTreeHead(size: UInt64) throws -> TreeHead {
        try database.read { db in
            let current = try TransparencyLogAppender.storedSize(db)
            guard size <= current else {
                throw StoreError(.invalidInput, "The transparency log has \(current) entries, so it has no tree head of size \(size).")
            }
            return try TreeHead.compute(size: size, from: StoredMerkleHashes(db: db))
        }
    }

    /// A reader of the stored hashes, for `InclusionProof.generate`, `ConsistencyProof.generate` and
    /// `TileLayout.contents`; pass it only sizes up to one `transparencyTreeHead()` returned.
    public var transparencyHashReader: TransparencyLogHashReader {
        TransparencyLogHashReader(store: self)
    }

    /// The entries at `range`, in order: the contents of an entry bundle (`EntryBundle.encode`).
    ///
    /// - Throws: `StoreError.invalidInput` when `range` reaches beyond the log's size.
    public func logEntries(_ range: Range<UInt64>) throws -> [TransparencyLogRecord] {
        try database.read { db in
            let size = try TransparencyLogAppender.storedSize(db)
            guard range.upperBound <= size else {
                throw StoreError(.invalidInput, "The transparency log has \(size) entries; entries \(range.lowerBound)..<\(range.upperBound) reach beyond them.")
            }
            guard !range.isEmpty else { return [] }
            let records = try db.fetchAll("""
                SELECT log_index, leaf_data, appended_at FROM transparency_log_entry WHERE log_index >= ? AND log_index < ? ORDER BY log_index
                """, [Int64(range.lowerBound), Int64(range.upperBound)]) { row in
                // The query selects indices of at least `range.lowerBound`, so none is negative.
                TransparencyLogRecord(
                    index: UInt64(exactly: try row.decode(Int64.self, atIndex: 0)) ?? .max, leafData: try row.decode(atIndex: 1),
                    appendedAt: try row.decode(atIndex: 2)
                )
            }
            guard records.map(\.index).elementsEqual(range) else {
                throw StoreError(.corruptData, "The transparency log is missing entries in \(range.lowerBound)..<\(range.upperBound). The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
            }
            return records
        }
    }

    /// The index of the entry that logged `customer` (matched ignoring case) at content `version`; `nil` when the
    /// log has none (no such version was ever given).
    public func logIndex(of customer: CustomerName, version: Int64) throws -> UInt64? {
        try database.read { db in
            try db.fetchValue(Int64.self, "SELECT log_index FROM transparency_log_entry WHERE customer = ? AND version = ?", [customer.rawValue, version])
                .flatMap { UInt64(exactly: $0) }
        }
    }
}
