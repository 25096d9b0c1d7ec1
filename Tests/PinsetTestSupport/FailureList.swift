import Foundation

/// Failures collected from concurrent workers, checked once they have all finished.
public final class FailureList: @unchecked Sendable {
    // `@unchecked`: `items` is only touched under `lock`.
    private let lock = NSLock()
    private var items: [String] = []

    public init() {}

    public func append(_ item: String) { lock.withLock { items.append(item) } }

    public var all: [String] { lock.withLock { items } }
}
