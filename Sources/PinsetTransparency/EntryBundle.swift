/// The entry-bundle encoding of c2sp.org/tlog-tiles: each entry as a big-endian uint16 length and its bytes.
///
/// Decoding consumes the whole input and, given the bundle's address, requires exactly its width in entries, so a
/// truncated or padded bundle cannot pass as a shorter or longer one.
public enum EntryBundle {
    /// The longest entry a uint16 length prefix can carry.
    public static let maximumEntrySize = Int(UInt16.max)

    public static func encode(_ entries: [[UInt8]]) throws -> [UInt8] {
        guard entries.count <= TileAddress.fullWidth else {
            throw TransparencyError(.invalidArgument, "A bundle holds at most 256 entries; got \(entries.count).")
        }
        var bundle = [UInt8]()
        bundle.reserveCapacity(entries.reduce(0) { $0 + 2 + $1.count })
        for (offset, entry) in entries.enumerated() {
            guard entry.count <= maximumEntrySize else {
                throw TransparencyError(
                    .entryTooLarge, "Entry \(offset) of the bundle is \(entry.count) bytes; the limit is 65,535.")
            }
            bundle.append(UInt8(entry.count >> 8))
            bundle.append(UInt8(entry.count & 0xFF))
            bundle.append(contentsOf: entry)
        }
        return bundle
    }

    public static func decode(_ bundle: [UInt8]) throws -> [[UInt8]] {
        var entries = [[UInt8]]()
        var offset = 0
        while offset < bundle.count {
            guard offset + 2 <= bundle.count else {
                throw TransparencyError(.malformedEntryBundle, "The bundle ends inside a length prefix.")
            }
            let length = Int(bundle[offset]) << 8 | Int(bundle[offset + 1])
            offset += 2
            guard offset + length <= bundle.count else {
                throw TransparencyError(.malformedEntryBundle, "Entry \(entries.count) runs past the bundle's end.")
            }
            entries.append(Array(bundle[offset..<(offset + length)]))
            offset += length
            guard entries.count <= TileAddress.fullWidth else {
                throw TransparencyError(.malformedEntryBundle, "The bundle holds more than 256 entries.")
            }
        }
        return entries
    }

    /// Decodes the bundle at `address`, which must hold exactly `address.width` entries.
    public static func decode(_ bundle: [UInt8], at address: TileAddress) throws -> [[UInt8]] {
        guard address.kind == .entries else {
            throw TransparencyError(.malformedEntryBundle, "\(address.path) is a hash tile, not an entry bundle.")
        }
        let entries = try decode(bundle)
        guard entries.count == address.width else {
            throw TransparencyError(
                .malformedEntryBundle, "\(address.path) must hold \(address.width) entries; got \(entries.count).")
        }
        return entries
    }
}
