import Foundation
import PinsetCore

/// The signed bundles being served. A signing pass builds a whole new snapshot and swaps it in at once, so a
/// request sees either the previous pass or the new one, never a mix. Reads are a lock and a dictionary lookup.
public final class BundleCache: Sendable {
    public struct Snapshot: Sendable {
        public let bundles: [CustomerName: SignedBundle]
        /// Unix seconds of the pass that produced this snapshot.
        public let signedAt: Int64

        public static let empty = Snapshot(bundles: [:], signedAt: 0)

        /// The signing time of the oldest bundle, for the "age of the oldest served bundle" metric.
        public var oldestTimestamp: Int64? { bundles.values.lazy.map(\.timestamp).min() }
    }

    private let current = LockedValue(Snapshot.empty)

    public init() {}

    public var snapshot: Snapshot { current.value }

    public func bundle(for customer: CustomerName) -> SignedBundle? {
        current.value.bundles[customer]
    }

    public func replace(with bundles: [SignedBundle], signedAt: Int64) {
        var map: [CustomerName: SignedBundle] = [:]
        map.reserveCapacity(bundles.count)
        for bundle in bundles { map[bundle.customer] = bundle }
        current.value = Snapshot(bundles: map, signedAt: signedAt)
    }
}

/// A value behind a lock; `Sendable` because every access takes the lock.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    @discardableResult
    func update<T>(_ body: (inout Value) -> T) -> T {
        lock.withLock { body(&stored) }
    }
}
