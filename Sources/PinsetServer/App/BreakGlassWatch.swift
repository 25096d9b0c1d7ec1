import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetStore

/// Keeps the pin edits applied without review (break-glass) that no second admin has acknowledged yet, read from
/// the store every few seconds, for `/status` and the metrics: so that an edit no second person looked at is in
/// front of whoever watches the servers until someone does. Off the request path: a read of a small table per
/// interval; a failed read keeps the last list (the store's own outage shows in `/status` already).
public final class BreakGlassWatch: Sendable {
    private let store: PinStore
    private let metrics: ServerMetrics?
    private let logger: Logger
    private let current = LockedValue<[BreakGlassEvent]>([])
    private let schedule = LockedValue<RepeatingTask?>(nil)

    public init(store: PinStore, interval: Duration = .seconds(2), metrics: ServerMetrics?, logger: Logger) {
        self.store = store
        self.metrics = metrics
        self.logger = logger
        let task = RepeatingTask(
            label: "pinset.break-glass-watch", interval: interval, logger: logger,
            failure: "Could not read break-glass applications; /status shows the last list read"
        ) { [weak self] in try self?.read() }
        schedule.withLock { $0 = task }
    }

    /// The unacknowledged applications as of the last read, newest first.
    public var unacknowledged: [BreakGlassEvent] { current.withLock { $0 } }

    /// Reads now, then on every interval.
    public func start() {
        schedule.withLock { $0 }?.start()
    }

    public func stop() {
        schedule.withLock { $0 }?.stop()
    }

    private func read() throws {
        let events = try store.breakGlassEvents()
        let known = Set(current.withLock { $0 }.map(\.id))
        for event in events where !known.contains(event.id) {
            logger.warning("A pin edit was applied without review (break-glass) and waits for another admin's acknowledgement", metadata: [
                "break_glass": "\(event.id)", "change_request": "\(event.changeRequestID)", "customer": "\(event.customer)",
                "applied_by": "\(event.appliedBy)",
            ])
        }
        current.withLock { $0 = events }
        metrics?.recordUnacknowledgedBreakGlass(events.count)
    }
}

/// The break-glass watch as a background service.
struct BreakGlassWatchService: BackgroundService {
    let watch: BreakGlassWatch

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
