import PinsetCore

/// Where the server reads pin sets from. The SQLite store in production; tests may pass their own.
public protocol PinSetSource: Sendable {
    func allPinSets() throws -> [PinSet]
    /// A number that changes whenever any pin set may have changed; polled twice a second.
    func changeCounter() throws -> Int64
}
