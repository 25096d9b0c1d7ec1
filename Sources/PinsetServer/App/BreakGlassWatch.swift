import Foundation
import Logging
import PinsetStore

/// The pin edits applied without review (break-glass) that no second admin has acknowledged yet: so that an edit no
/// second person looked at is in front of whoever watches the servers until someone does.
public typealias BreakGlassWatch = StoreListWatch<BreakGlassEvent>

extension StoreListWatch where Item == BreakGlassEvent {
    public convenience init(store: PinStore, interval: Duration = .seconds(2), metrics: ServerMetrics?, logger: Logger) {
        self.init(
            label: "pinset.break-glass-watch", interval: interval, logger: logger,
            failure: "Could not read break-glass applications; /status shows the last list read",
            fetch: { try store.breakGlassEvents() },
            identity: { "\($0.id)" },
            announce: { event in
                logger.warning("A pin edit was applied without review (break-glass) and waits for another admin's acknowledgement", metadata: [
                    "break_glass": "\(event.id)", "change_request": "\(event.changeRequestID)", "customer": "\(event.customer)",
                    "applied_by": "\(event.appliedBy)",
                ])
            },
            publish: { events in metrics?.recordUnacknowledgedBreakGlass(events.count) })
    }

    /// The unacknowledged applications as of the last read, newest first.
    public var unacknowledged: [BreakGlassEvent] { items }
}
