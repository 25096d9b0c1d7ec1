import Dispatch
import Logging

/// Runs a piece of store work now and then every interval, on its own serial Dispatch queue (off the request path
/// and off the cooperative pool), until stopped. A failure is logged once when it starts and once when the work
/// succeeds again, not on every interval of an outage.
final class RepeatingTask: @unchecked Sendable {
    private let queue: DispatchQueue
    private let interval: Duration
    private let logger: Logger
    private let failure: String
    private let recovery: String?
    private let work: @Sendable () throws -> Void
    /// Confined to `queue`.
    private var timer: (any DispatchSourceTimer)?
    private var failing = false
    private var stopped = false

    /// - Parameters:
    ///   - failure: logged as a warning, with the error, when the work first fails.
    ///   - recovery: logged when it succeeds again after failing; nil to say nothing.
    init(label: String, interval: Duration, logger: Logger, failure: String, recovery: String? = nil, work: @escaping @Sendable () throws -> Void) {
        queue = DispatchQueue(label: label)
        self.interval = interval
        self.logger = logger
        self.failure = failure
        self.recovery = recovery
        self.work = work
    }

    /// Runs the work now, then on every interval; nothing once started, or once stopped.
    func start() {
        queue.sync {
            guard timer == nil, !stopped else { return }
            run()
            let source = DispatchSource.makeTimerSource(queue: queue)
            let period = DispatchTimeInterval.milliseconds(Int(max(1, interval.milliseconds)))
            source.schedule(deadline: .now() + period, repeating: period)
            source.setEventHandler { [self] in run() }
            timer = source
            source.resume()
        }
    }

    /// Runs the work now, in turn with the scheduled runs.
    func runNow() {
        queue.sync { run() }
    }

    /// Stops the schedule once a run in progress has finished, then runs `last` on the same queue: nothing of the
    /// schedule runs after it.
    func stop(then last: () -> Void = {}) {
        queue.sync {
            timer?.cancel()
            timer = nil
            stopped = true
            last()
        }
    }

    private func run() {
        do {
            try work()
            if failing, let recovery { logger.info("\(recovery)") }
            failing = false
        } catch {
            if !failing { logger.warning("\(failure)", metadata: ["error": "\(error)"]) }
            failing = true
        }
    }
}
