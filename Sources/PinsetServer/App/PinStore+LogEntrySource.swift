import PinsetLogPublishing
import PinsetStore

extension PinStore: LogEntrySource {
    public func transparencyLogLeaves(_ range: Range<UInt64>) throws -> [[UInt8]] {
        try logEntries(range).map(\.leafData)
    }
}
