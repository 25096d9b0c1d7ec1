import Foundation
import PinsetCore
import PinsetTransparency

/// The whole log in memory: every entry and every perfect-subtree hash, so that proofs and tiles are answered
/// without a query. Appending recomputes the hashes from the entries themselves, so the mirror is a check on the
/// hashes the store keeps rather than a copy of them.
///
/// Thread-safe: the publisher appends on its own queue while request threads read. Perfect-subtree hashes never
/// change once complete, so a reader asking for positions inside a size it was told about always gets the hashes
/// of that tree, however far the mirror has grown since.
final class LogMirror: MerkleHashReader, @unchecked Sendable {
    // `@unchecked Sendable`: every stored property below is read and written under `lock` only.
    private let lock = NSLock()
    /// `levels[l][i]` is the hash of the perfect subtree of height `l` starting at leaf `i · 2^l`.
    private var levels: [[MerkleHash]] = [[]]
    private var entries: [PinSetLogEntry] = []
    private var indexOfEntry: [EntryKey: UInt64] = [:]

    struct EntryKey: Hashable {
        let customer: CustomerName
        let version: Int64
    }

    var size: UInt64 { lock.withLock { UInt64(entries.count) } }

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
                let index = UInt64(entries.count)
                entries.append(entry)
                indexOfEntry[EntryKey(customer: entry.customer, version: entry.version)] = index
                levels[0].append(leafHash)
                // Each perfect subtree is completed by the leaf that fills its right half.
                var level = 0
                while levels[level].count % 2 == 0 {
                    let count = levels[level].count
                    let parent = TreeHasher.nodeHash(left: levels[level][count - 2], right: levels[level][count - 1])
                    if levels.count == level + 1 { levels.append([]) }
                    levels[level + 1].append(parent)
                    level += 1
                }
            }
        }
    }

    func index(of customer: CustomerName, version: Int64) -> UInt64? {
        lock.withLock { indexOfEntry[EntryKey(customer: customer, version: version)] }
    }

    /// Entries `range`, encoded as the log holds them; the caller keeps `range` inside a size it was told about.
    func leaves(_ range: Range<UInt64>) -> [[UInt8]] {
        lock.withLock { entries[Int(range.lowerBound)..<Int(range.upperBound)].map { $0.encoded() } }
    }

    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        try lock.withLock {
            try positions.map { position in
                guard position.level < levels.count, position.index < UInt64(levels[position.level].count) else {
                    throw LogPublishingError("The log has no hash at \(position) yet.")
                }
                return levels[position.level][Int(position.index)]
            }
        }
    }
}

/// The transparency log cannot be published as it is.
public struct LogPublishingError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
