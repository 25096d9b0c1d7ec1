import PinsetTransparency

/// Where a log publisher reads the transparency log from: the store that appends to it.
///
/// Entries and the hashes they complete never change once written, so reads made at different times fit
/// together: entries up to a size read earlier stay exactly as they were.
public protocol LogEntrySource: Sendable {
    /// The number of entries the log holds now.
    func transparencyLogSize() throws -> UInt64
    /// The leaf data of the entries at `range`, in order.
    func transparencyLogLeaves(_ range: Range<UInt64>) throws -> [[UInt8]]
    /// The root hash the store computes for the tree of `size` entries from the hashes it keeps.
    func transparencyTreeHead(size: UInt64) throws -> TreeHead
}
