import PinsetTransparency

/// The transparency log's stored perfect-subtree hashes, read through one connection inside a transaction.
///
/// One query per batch of up to 256 positions (a tile's, or any proof's): positions are grouped by level, and a
/// level whose positions are consecutive (a tile's hashes) is read as one index range, the others (a proof's one
/// or two per level) by their indices, which keeps every query under SQLite's 999 bound values.
struct StoredMerkleHashes: MerkleHashReader {
    let db: any StoreConnection

    static let positionsPerQuery = 256

    func hashes(at positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        var hashes: [MerkleHash] = []
        hashes.reserveCapacity(positions.count)
        for start in stride(from: 0, to: positions.count, by: Self.positionsPerQuery) {
            hashes += try batch(Array(positions[start..<min(start + Self.positionsPerQuery, positions.count)]))
        }
        return hashes
    }

    private func batch(_ positions: [MerkleNodePosition]) throws -> [MerkleHash] {
        guard !positions.isEmpty else { return [] }
        var conditions: [String] = []
        var arguments: [any SQLArgument] = []
        let byLevel = Dictionary(grouping: positions, by: \.level)
        for level in byLevel.keys.sorted() {
            let indices = Set(byLevel[level, default: []].map(\.index)).sorted()
            guard let first = indices.first, let last = indices.last else { continue }
            if last - first + 1 == UInt64(indices.count) {
                conditions.append("(level = ? AND node_index BETWEEN ? AND ?)")
                arguments += [Int64(level), Int64(first), Int64(last)]
            } else {
                conditions.append("(level = ? AND node_index IN (\(Array(repeating: "?", count: indices.count).joined(separator: ", "))))")
                arguments += [Int64(level)] + indices.map { Int64($0) }
            }
        }
        var found: [MerkleNodePosition: MerkleHash] = [:]
        try db.forEachRow("SELECT level, node_index, hash FROM transparency_log_hash WHERE \(conditions.joined(separator: " OR "))", arguments) { row in
            let level: Int64 = try row.decode(atIndex: 0)
            let index: Int64 = try row.decode(atIndex: 1)
            let bytes: [UInt8] = try row.decode(atIndex: 2)
            guard let unsigned = UInt64(exactly: index), let position = try? MerkleNodePosition(level: Int(level), index: unsigned),
                  let hash = try? MerkleHash(bytes: bytes) else {
                throw StoreError(.corruptData, "The transparency log's stored hash at level \(level), index \(index) is not valid. The database was edited by hand or is damaged; restore it from a backup with 'pinset store restore'.")
            }
            found[position] = hash
        }
        return try positions.map { position in
            guard let hash = found[position] else {
                throw StoreError(.invalidInput, "The transparency log has no stored hash at \(position): the tree does not cover leaves \(position.leafRange.lowerBound)..<\(position.leafRange.upperBound) yet.")
            }
            return hash
        }
    }
}
