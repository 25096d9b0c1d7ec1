import PinsetLogPublishing
import PinsetStore

/// The store's transparency log, as the server and `pinset sign --out` publish it.
extension PinStore: LogEntrySource {
    public func transparencyLogLeaves(_ range: Range<UInt64>) throws -> [[UInt8]] {
        try logEntries(range).map(\.leafData)
    }
}
