import Dispatch
import Foundation
import Logging
import PinsetCore

/// A list that needs someone's attention, read from the store every few seconds for `/status` and the metrics, so
/// that it stays in front of whoever watches the servers until it is dealt with; each item is logged once, when a
/// read first finds it. Off the request path: a failed read keeps the last list (the store's own outage shows in
/// `/status` already).
public final class StoreListWatch<Item: Sendable>: Sendable {
    private let current = LockedValue<[Item]>([])
    private let schedule = LockedValue<RepeatingTask?>(nil)
    private let fetch: @Sendable () throws -> [Item]
    private let identity: @Sendable (Item) -> String
    private let announce: @Sendable (Item) -> Void
    private let publish: @Sendable ([Item]) -> Void

    /// - Parameters:
    ///   - label: the repeating task's name; `failure`: what a failed read logs.
    ///   - fetch: reads the list from the store.
    ///   - identity: what makes an item the same one from one read to the next.
    ///   - announce: logs an item a read finds for the first time.
    ///   - publish: records each read's list (in the metrics).
    init(
        label: String, interval: Duration, logger: Logger, failure: String,
        fetch: @escaping @Sendable () throws -> [Item], identity: @escaping @Sendable (Item) -> String,
        announce: @escaping @Sendable (Item) -> Void, publish: @escaping @Sendable ([Item]) -> Void
    ) {
        self.fetch = fetch
        self.identity = identity
        self.announce = announce
        self.publish = publish
        let task = RepeatingTask(label: label, interval: interval, logger: logger, failure: failure) { [weak self] in try self?.read() }
        schedule.withLock { $0 = task }
    }

    /// The list as of the last read.
    public var items: [Item] { current.withLock { $0 } }

    /// Reads now, then on every interval.
    public func start() {
        schedule.withLock { $0 }?.start()
    }

    public func stop() {
        schedule.withLock { $0 }?.stop()
    }

    private func read() throws {
        let items = try fetch()
        let known = Set(current.withLock { $0 }.map(identity))
        for item in items where !known.contains(identity(item)) {
            announce(item)
        }
        current.withLock { $0 = items }
        publish(items)
    }
}

/// A store list watch as a background service.
struct StoreListWatchService<Item: Sendable>: BackgroundService {
    let watch: StoreListWatch<Item>

    func start() {
        watch.start()
    }

    func shutdown() async {
        // `stop` waits for a store read in progress: on a Dispatch thread, not a cooperative one.
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                watch.stop()
                stopped.resume()
            }
        }
    }
}
