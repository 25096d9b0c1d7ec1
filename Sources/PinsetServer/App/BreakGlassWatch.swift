import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetStore

/// Keeps the pin edits applied without review (break-glass) that no second admin has acknowledged yet, read from
/// the store every few seconds, for `/status` and the metrics: so that an edit no second person looked at is in
/// front of whoever watches the servers until someone does. Off the request path: a read of a small table per
/// interval; a failed read keeps the last list (the store's own outage shows in `/status` already).
public final class BreakGlassWatch: @unchecked Sendable {
    private let store: PinStore
    private let interval: Duration
    private let metrics: ServerMetrics?
    private let logger: Logger
    private let queue = DispatchQueue(label: "pinset.break-glass-watch")
    /// Confined to `queue`.
    private var timer: (any DispatchSourceTimer)?
    private var lastReadFailed = false
    private let current = LockedValue<[BreakGlassEvent]>([])

    public init(store: PinStore, interval: Duration = .seconds(2), metrics: ServerMetrics?, logger: Logger) {
        self.store = store
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
    }

    /// The unacknowledged applications as of the last read, newest first.
    public var unacknowledged: [BreakGlassEvent] { current.withLock { $0 } }

    /// Reads now, then on every interval.
    public func start() {
        queue.sync {
            read()
            let source = DispatchSource.makeTimerSource(queue: queue)
            let period = DispatchTimeInterval.milliseconds(Int(max(1, interval.milliseconds)))
            source.schedule(deadline: .now() + period, repeating: period)
            source.setEventHandler { [self] in read() }
            timer = source
            source.resume()
        }
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    private func read() {
        do {
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
            lastReadFailed = false
        } catch {
            if !lastReadFailed {
                logger.warning("Could not read break-glass applications; /status shows the last list read", metadata: ["error": "\(error)"])
            }
            lastReadFailed = true
        }
    }
}

/// The break-glass watch as a background service.
struct BreakGlassWatchService: BackgroundService {
    let watch: BreakGlassWatch

    func start() {
        watch.start()
    }

    func shutdown() async {
        watch.stop()
    }
}
