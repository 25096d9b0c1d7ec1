import Foundation
import PinsetCore
import PinsetTransparency

/// The whole log in memory: every entry and every perfect-subtree hash, so that proofs and tiles are answered
/// without a query. Appending recomputes the hashes from the entries themselves, so the mirror is a check on the
/// hashes the store keeps rather than a copy of them.
///
/// Held flat — each level's hashes 32 bytes apiece in one array, the entries as columns with each customer's name
/// once — because a log of a million entries held as one small array per hash and entry costs several times its
/// bytes in allocations, and every server instance keeps a mirror. An entry is kept as what it says (customer,
/// version, content hash) and encoded again when read: ``PinSetLogEntry`` accepts only the one canonical encoding,
/// so that gives back the exact leaf data appended.
///
/// Thread-safe: the publisher appends on its own queue while request threads read. Perfect-subtree hashes never
/// change once complete, so a reader asking for positions inside a size it was told about always gets the hashes
/// of that tree, however far the mirror has grown since.
final class LogMirror: MerkleHashReader, @unchecked Sendable {
    // `@unchecked Sendable`: every stored property below is read and written under `lock` only.
    private let lock = NSLock()
    /// `levels[l]` holds, 32 bytes each, the hash of every complete perfect subtree of height `l`, in order: the
    /// `i`-th covers the leaves from `i · 2^l`.
    private var levels: [[UInt8]] = [[]]
    /// Entry `i` is customer `customers[entryCustomers[i]]` at `entryVersions[i]` with the content hash at
    /// `32 · i` in `entryContentHashes`.
    private var entryCustomers: [UInt32] = []
    private var entryVersions: [Int64] = []
    private var entryContentHashes: [UInt8] = []
    private var customers: [CustomerName] = []
    private var customerNumbers: [CustomerName: UInt32] = [:]
    private var indexOfEntry: [EntryKey: UInt64] = [:]

    private static let hashSize = MerkleHash.byteCount

    private struct EntryKey: Hashable {
        let customer: UInt32
        let version: Int64
    }

    var size: UInt64 { lock.withLock { UInt64(entryVersions.count) } }

    /// Appends leaf data in log order; refuses anything that is not a canonical pin-set log entry, since the
    /// server can only prove entries it can name.
    func append(leaves: [[UInt8]]) throws {
        let parsed = try leaves.map { leaf in
            do {
                return (entry: try PinSetLogEntry(encoded: leaf), hash: TreeHasher.leafHash(ofEntry: leaf))
            } catch {
                throw LogPublishingError("The transparency log holds an entry that is not a pin-set log entry (\(error)). The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
            }
        }
        lock.withLock {
            for (entry, leafHash) in parsed {
                let index = UInt64(entryVersions.count)
                let customer = number(of: entry.customer)
                entryCustomers.append(customer)
                entryVersions.append(entry.version)
                entryContentHashes.append(contentsOf: entry.contentSHA256.bytes)
                indexOfEntry[EntryKey(customer: customer, version: entry.version)] = index
                levels[0].append(contentsOf: leafHash.bytes)
                // Each perfect subtree is completed by the leaf that fills its right half.
                var level = 0
                while hashCount(at: level) % 2 == 0 {
                    let count = hashCount(at: level)
                    let parent = TreeHasher.nodeHash(left: hash(at: level, count - 2), right: hash(at: level, count - 1))
                    if levels.count == level + 1 { levels.append([]) }
                    levels[level + 1].append(contentsOf: parent.bytes)
                    level += 1
                }
            }
        }
    }

    func index(of customer: CustomerName, version: Int64) -> UInt64? {
        lock.withLock {
            guard let number = customerNumbers[customer] else { return nil }
            return indexOfEntry[EntryKey(customer: number, version: version)]
        }
    }

    /// Entries `range`, encoded as the log holds them; the caller keeps `range` inside a size it was told about.
    func leaves(_ range: Range<UInt64>) throws -> [[UInt8]] {
        try lock.withLock {
            try (Int(range.lowerBound)..<Int(range.upperBound)).map { index in
                let start = index * Self.hashSize
                return try PinSetLogEntry(
                    customer: customers[Int(entryCustomers[index])], version: entryVersions[index],
                    contentSHA256: SHA256Fingerprint(bytes: Array(entryContentHashes[start..<(start + Self.hashSize)]))
                ).encoded()
            }
        }
    }

    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        try lock.withLock {
            try positions.map { position in
                guard position.level < levels.count, position.index < UInt64(hashCount(at: position.level)) else {
                    throw LogPublishingError("The log has no hash at \(position) yet.")
                }
                return hash(at: position.level, Int(position.index))
            }
        }
    }

    // The helpers below are called under `lock`.

    /// The customer's number, given on its first entry: each name is held once however many versions it has.
    private func number(of customer: CustomerName) -> UInt32 {
        if let known = customerNumbers[customer] { return known }
        let number = UInt32(customers.count)
        customers.append(customer)
        customerNumbers[customer] = number
        return number
    }

    private func hashCount(at level: Int) -> Int { levels[level].count / Self.hashSize }

    /// Never fails: every hash appended is a `MerkleHash`'s 32 bytes, so an append cannot stop halfway.
    private func hash(at level: Int, _ index: Int) -> MerkleHash {
        let start = index * Self.hashSize
        guard let hash = try? MerkleHash(bytes: levels[level][start..<(start + Self.hashSize)]) else {
            preconditionFailure("the mirror holds 32 bytes per hash")
        }
        return hash
    }
}

/// The transparency log cannot be published as it is.
public struct LogPublishingError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
