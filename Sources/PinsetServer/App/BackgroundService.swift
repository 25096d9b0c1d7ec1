import PinsetCore

/// A part of the server that works in the background between start and shutdown: the signing schedule, the
/// host monitor, the report writer, each listener. One shape, so that ``BackgroundServiceGroup`` can start them
/// in order and shut them down in reverse.
protocol BackgroundService: Sendable {
    /// Starts the work and returns once it is under way; throws when the service cannot run (a port in use).
    func start() throws
    /// Stops the work and returns once it has stopped. Called at most once, and only after `start` succeeded.
    func shutdown() async
}

/// Services started in the order given and shut down in reverse, so that none stops while a service started
/// after it may still use it; or, with ``ShutdownOrder/concurrent``, shut down side by side, so that their waits
/// overlap instead of adding up.
///
/// A group is itself a service, so groups nest. When a service fails to start, the ones started before it keep
/// running until ``shutdown()``, which stops exactly the services that started.
final class BackgroundServiceGroup: BackgroundService {
    enum ShutdownOrder: Sendable {
        case reverse
        case concurrent
    }

    private let services: [any BackgroundService]
    private let order: ShutdownOrder
    /// How many of `services`, from the first, have started and not yet been shut down.
    private let running = LockedValue(0)

    init(_ services: [any BackgroundService], shutdown order: ShutdownOrder = .reverse) {
        self.services = services
        self.order = order
    }

    func start() throws {
        for service in services {
            try service.start()
            running.withLock { $0 += 1 }
        }
    }

    func shutdown() async {
        let started = running.withLock { count in
            defer { count = 0 }
            return Array(services.prefix(count))
        }
        switch order {
        case .reverse:
            for service in started.reversed() { await service.shutdown() }
        case .concurrent:
            await withTaskGroup(of: Void.self) { group in
                for service in started { group.addTask { await service.shutdown() } }
            }
        }
    }
}
