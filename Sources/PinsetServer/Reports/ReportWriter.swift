import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetStore

/// Where ``ReportWriter`` stores its hourly counts: the ``PinStore``, or a fake in tests.
public protocol PinFailureCountSink: Sendable {
    @discardableResult func addPinFailureCounts(_ counts: [PinFailureCount], maximumRowsPerCustomerHour: Int) throws -> Int
    @discardableResult func deletePinFailureCounts(before hour: Int64) throws -> Int
}

extension PinStore: PinFailureCountSink {}

/// Moves accepted reports from the connection queues to the store without making serving wait for the database.
///
/// ``enqueue(_:)`` only adds one to a count in memory, under a short lock: identical reports cost one entry. A
/// private queue writes the counts every `flushInterval`, in transactions of at most `batchSize` counts with a
/// short pause between them, so that an admin edit waiting for the database's write lock waits for one small
/// batch at most, and once an hour deletes the hours older than the retention. The pending table holds at most
/// `maximumPendingKeys` distinct keys; a report that would need a new one is refused (the handler answers 503 and
/// the app retries later), so a flood of distinct reports cannot grow memory while the database is slow. When a
/// write fails, the counts are kept for the next attempt as far as the bound allows, and the failure is logged.
///
/// Thread-safe. Start it once; ``stop(deadline:)`` writes what is pending, within its deadline, before it returns.
public final class ReportWriter: @unchecked Sendable {
    // `@unchecked Sendable`: `timer` and `retainedHour` are touched only on `queue`; the pending table
    // and the in-flight batch are behind their own locks.
    public let maximumPendingKeys: Int
    public let retentionSeconds: Int64
    public let batchSize: Int
    public let maximumRowsPerCustomerHour: Int
    private let sink: any PinFailureCountSink
    private let flushInterval: Duration
    private let batchPause: Duration
    private let logger: Logger
    private let now: @Sendable () -> Int64
    private let queue = DispatchQueue(label: "pinset.report-writer")
    private let pending = LockedValue<[PinFailureCount.Key: Int64]>([:])
    /// Reports in the batch being written: neither pending nor stored until the write returns.
    private let inFlight = LockedValue<Int64>(0)
    private var timer: (any DispatchSourceTimer)?
    /// The hour retention last ran in.
    private var retainedHour = Int64.min
    private let writeFailures = LockedValue(0)

    public init(sink: any PinFailureCountSink, maximumPendingKeys: Int, retentionDays: Int, flushInterval: Duration,
                batchSize: Int = 200, batchPause: Duration = .milliseconds(10),
                maximumRowsPerCustomerHour: Int = PinStore.defaultMaximumReportRowsPerCustomerHour,
                logger: Logger, now: @escaping @Sendable () -> Int64) {
        precondition(maximumPendingKeys > 0 && retentionDays > 0 && batchSize > 0, "report writer limits must be positive")
        self.sink = sink
        self.maximumPendingKeys = maximumPendingKeys
        self.retentionSeconds = Int64(retentionDays) * 86_400
        self.flushInterval = flushInterval
        self.batchSize = batchSize
        self.batchPause = batchPause
        self.maximumRowsPerCustomerHour = maximumRowsPerCustomerHour
        self.logger = logger
        self.now = now
    }

    /// Counts one report; false when the pending table is full and the report was not counted.
    public func enqueue(_ key: PinFailureCount.Key) -> Bool {
        pending.withLock { pending in
            if let count = pending[key] {
                pending[key] = count + 1
                return true
            }
            guard pending.count < maximumPendingKeys else { return false }
            pending[key] = 1
            return true
        }
    }

    /// Distinct keys waiting to be written.
    public var pendingKeys: Int { pending.withLock { $0.count } }

    /// Failed writes since start.
    public var failedWrites: Int { writeFailures.withLock { $0 } }

    /// Starts the periodic writes.
    public func start() {
        queue.sync {
            let source = DispatchSource.makeTimerSource(queue: queue)
            let interval = DispatchTimeInterval.milliseconds(Int(max(1, flushInterval.milliseconds)))
            source.schedule(deadline: .now() + interval, repeating: interval)
            source.setEventHandler { [self] in
                applyRetention()
                writeBatches(until: nil)
            }
            timer = source
            source.resume()
        }
    }

    /// Stops the periodic writes and writes what is pending, giving up after `deadline`; call it once reports are
    /// no longer accepted. Logs how many counted reports could not be written, if any.
    ///
    /// - Returns: the number of reports that were accepted but could not be written in time (0 when all were).
    @discardableResult
    public func stop(deadline: Duration) -> Int64 {
        let limit = ContinuousClock.now + deadline
        let done = DispatchSemaphore(value: 0)
        queue.async { [self] in
            timer?.cancel()
            timer = nil
            writeBatches(until: limit)
            done.signal()
        }
        // A batch waiting for an unanswering database can outlast the deadline; stop waits only a little longer.
        let waitSeconds = max(0, (limit - ContinuousClock.now).secondsValue) + 1
        let finished = done.wait(timeout: .now() + waitSeconds) == .success
        let left = pending.withLock { $0.values.reduce(0, +) }
        let unfinished = finished ? 0 : inFlight.withLock { $0 }
        if left + unfinished > 0 {
            logger.error("Pin-failure report counts were accepted but could not be stored before the shutdown deadline; they are lost", metadata: [
                "dropped_reports": "\(left + unfinished)", "pending_reports": "\(left)", "reports_in_unfinished_write": "\(unfinished)",
                "deadline_s": "\(deadline.secondsValue)",
            ])
        } else {
            logger.info("Stored every accepted pin-failure report before stopping", metadata: ["dropped_reports": "0"])
        }
        return left + unfinished
    }

    /// Writes what is pending now, on the writer's queue, and returns when it is written (tests).
    public func flush() {
        queue.sync {
            applyRetention()
            writeBatches(until: nil)
        }
    }

    /// Runs on `queue` only. Writes batch after batch until nothing is pending, a write fails, or `deadline` passes.
    private func writeBatches(until deadline: ContinuousClock.Instant?) {
        var first = true
        while deadline.map({ ContinuousClock.now < $0 }) ?? true {
            if !first && batchPause > .zero {
                // Between batches the write lock is free for a moment, long enough for an admin edit's retry to take it.
                Thread.sleep(forTimeInterval: batchPause.secondsValue)
            }
            first = false
            let batch = pending.withLock { pending -> [(key: PinFailureCount.Key, value: Int64)] in
                let taken = Array(pending.prefix(batchSize))
                for entry in taken { pending[entry.key] = nil }
                return taken
            }
            guard !batch.isEmpty else { return }
            inFlight.withLock { $0 = batch.reduce(0) { $0 + $1.value } }
            defer { inFlight.withLock { $0 = 0 } }
            do {
                try sink.addPinFailureCounts(batch.map { PinFailureCount(key: $0.key, reports: $0.value) },
                                             maximumRowsPerCustomerHour: maximumRowsPerCustomerHour)
            } catch {
                writeFailures.withLock { $0 += 1 }
                logger.error("Could not store pin-failure report counts; keeping them for the next attempt", metadata: ["error": "\(error)"])
                restore(batch)
                return
            }
        }
    }

    /// Puts a batch whose write failed back, as far as the pending bound allows; what does not fit is logged.
    private func restore(_ batch: [(key: PinFailureCount.Key, value: Int64)]) {
        let lost = pending.withLock { pending -> Int64 in
            var lost: Int64 = 0
            for (key, count) in batch {
                if let current = pending[key] {
                    pending[key] = current + count
                } else if pending.count < maximumPendingKeys {
                    pending[key] = count
                } else {
                    lost += count
                }
            }
            return lost
        }
        if lost > 0 {
            logger.error("Pin-failure report counts were dropped: the pending table filled while the database could not be written", metadata: ["dropped_reports": "\(lost)"])
        }
    }
    private func applyRetention() {
        let hour = PinFailureCount.hour(containing: now())
        guard hour != retainedHour else { return }
        do {
            let deleted = try sink.deletePinFailureCounts(before: hour - retentionSeconds)
            retainedHour = hour
            if deleted > 0 { logger.info("Deleted pin-failure report counts past their retention", metadata: ["rows": "\(deleted)"]) }
        } catch {
            logger.error("Could not delete old pin-failure report counts; retrying on the next write", metadata: ["error": "\(error)"])
        }
    }
}

extension Duration {
    /// Seconds as a fraction, for sleeps, semaphore timeouts and logs.
    fileprivate var secondsValue: Double { Double(nanoseconds) / 1_000_000_000 }
}
