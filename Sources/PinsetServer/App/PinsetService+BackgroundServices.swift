import PinsetAdminAPI
import PinsetAdminContract
import Dispatch
import Logging

/// The signing schedule: its first pass runs in `start`, before anything listens, so that a server is ready when
/// it starts listening or knows why not.
struct SigningScheduleService: BackgroundService {
    let refresher: BundleRefresher
    let logger: Logger

    func start() {
        if !refresher.start() {
            logger.error("The first signing pass failed; serving nothing until a pass succeeds (see the error above). /readyz reports not ready.")
        }
    }

    func shutdown() async {
        refresher.stop()
    }
}

/// The scheduled live-chain checks of the pinned hosts.
struct HostMonitorService: BackgroundService {
    let monitor: HostMonitor
    let logger: Logger

    func start() {
        monitor.start()
        logger.info("Monitoring pinned hosts", metadata: [
            "interval_s": "\(monitor.configuration.intervalSeconds)", "concurrency": "\(monitor.configuration.concurrency)",
            "timeout_s": "\(monitor.configuration.timeoutSeconds)",
        ])
    }

    func shutdown() async {
        await monitor.stop()
    }
}

/// A socket listener: bound in `start`, drained for up to `gracePeriod` in `shutdown`.
struct ListenerService: BackgroundService {
    let server: SocketServer
    let gracePeriod: Duration
    /// Told the bound port once listening, to log it.
    let started: @Sendable (UInt16) -> Void

    init(_ server: SocketServer, gracePeriod: Duration, started: @escaping @Sendable (UInt16) -> Void = { _ in }) {
        self.server = server
        self.gracePeriod = gracePeriod
        self.started = started
    }

    func start() throws {
        started(try server.start())
    }

    func shutdown() async {
        await server.shutdown(gracePeriod: gracePeriod)
    }
}

/// The writer of pin-failure report counts: its shutdown writes what is pending, within `deadline`.
struct ReportWriterService: BackgroundService {
    let writer: ReportWriter
    let deadline: Duration

    func start() {
        writer.start()
    }

    func shutdown() async {
        // `stop` blocks for up to its deadline: on a Dispatch thread, not one of the few cooperative ones the
        // listeners' shutdown needs meanwhile.
        await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                writer.stop(deadline: deadline)
                written.resume()
            }
        }
    }
}

/// The admin API listener: started last, stopped first.
struct AdminAPIService: BackgroundService {
    let server: AdminAPIServer

    func start() throws {
        try server.start()
    }

    func shutdown() async {
        await server.shutdown()
    }
}
