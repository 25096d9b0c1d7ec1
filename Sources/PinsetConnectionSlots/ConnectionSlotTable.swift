import Logging
import NIOCore
import PinsetCore

/// A listener's connections: ``ConnectionSlots`` under a lock, with the channel of each admitted connection so that
/// an eviction can close it, and a warning (at most one a minute) when connections are refused.
public final class ConnectionSlotTable: Sendable {
    private struct State {
        var slots: ConnectionSlots
        var channels: [UInt64: any Channel] = [:]
        var refusedSinceWarning = 0
        var lastWarning: NIODeadline?
    }

    private let state: LockedValue<State>
    private let logger: Logger
    private let listenerName: String
    private let protectedPhaseName: String

    /// - Parameters:
    ///   - listenerName: what the warning calls the listener, such as "Admin listener".
    ///   - protectedPhaseName: what the warning calls the connections that may not give way, such as "serves an
    ///     authenticated request or has its credentials checked".
    public init(limits: ConnectionSlots.Limits, logger: Logger, listenerName: String, protectedPhaseName: String) {
        state = LockedValue(State(slots: ConnectionSlots(limits: limits)))
        self.logger = logger
        self.listenerName = listenerName
        self.protectedPhaseName = protectedPhaseName
    }

    /// Counts `channel` and returns its id, closing the connections it evicts; nil when it must be refused.
    public func admit(_ channel: any Channel, address: String) -> UInt64? {
        let now = NIODeadline.now()
        let (id, evicted, warning) = state.withLock { state -> (UInt64?, [any Channel], String?) in
            switch state.slots.admit(address: address) {
            case .admitted(let id, let evicting):
                state.channels[id] = channel
                return (id, evicting.compactMap { state.channels.removeValue(forKey: $0) }, nil)
            case .refused(let refusal):
                state.refusedSinceWarning += 1
                // A flood refused connection by connection would flood the log too: one line a minute at most.
                if let last = state.lastWarning, now - last < .minutes(1) { return (nil, [], nil) }
                state.lastWarning = now
                defer { state.refusedSinceWarning = 0 }
                let reason = switch refusal {
                case .addressFull: "\(address) (counted as \(ClientAddress.key(for: address))) already holds \(state.slots.limits.perAddress) connections, none of which may give way (each \(protectedPhaseName))"
                case .listenerFull: "every slot a new connection may take is held by a connection that \(protectedPhaseName)"
                }
                return (nil, [], "\(state.refusedSinceWarning) connection(s) refused since the last such line; the last because \(reason)")
            }
        }
        // Closed outside the lock: a close callback removes its connection under the same lock.
        for channel in evicted { channel.close(promise: nil) }
        if let warning { logger.warning("\(listenerName) full", metadata: ["detail": "\(warning)"]) }
        return id
    }

    public func enter(_ phase: ConnectionSlots.Phase, id: UInt64, holder: String? = nil) {
        state.withLock { _ = $0.slots.enter(phase, id: id, holder: holder) }
    }

    public func remove(_ id: UInt64) {
        state.withLock { state in
            state.slots.remove(id)
            state.channels[id] = nil
        }
    }
}
