import Dispatch
import Logging
import PinsetCore
import PinsetStore

/// Where ``ReportWriter`` stores its hourly counts: the ``PinStore``, or a fake in tests.
public protocol PinFailureCountSink: Sendable {
    @discardableResult func addPinFailureCounts(_ counts: [PinFailureCount]) throws -> Int
    @discardableResult func deletePinFailureCounts(before hour: Int64) throws -> Int
}

extension PinStore: PinFailureCountSink {}

/// Moves accepted reports from the connection queues to the store without making serving wait for the database.
///
/// ``enqueue(_:)`` only adds one to a count in memory, under a short lock: identical reports cost one entry. A
/// private queue writes the counts every `flushInterval`, all in one transaction, and once an hour deletes
/// the hours older than the retention. The pending table holds at most `maximumPendingKeys` distinct keys; a
/// report that would need a new one is refused (the handler answers 503 and the app retries later), so a flood
/// of distinct reports cannot grow memory while the database is slow. When a write fails, the counts are kept
/// for the next attempt as far as the bound allows, and the failure is logged.
///
/// Thread-safe. Start it once; ``stop()`` writes what is pending before it returns.
public final class ReportWriter: @unchecked Sendable {
    // `@unchecked Sendable`: `timer` and `retainedHour` are touched only on `queue`; the pending table is
    // behind its own lock.
    public let maximumPendingKeys: Int
    public let retentionSeconds: Int64
    private let sink: any PinFailureCountSink
    private let flushInterval: Duration
    private let logger: Logger
    private let now: @Sendable () -> Int64
    private let queue = DispatchQueue(label: "pinset.report-writer")
    private let pending = LockedValue<[PinFailureCount.Key: Int64]>([:])
    private var timer: (any DispatchSourceTimer)?
    /// The hour retention last ran in.
    private var retainedHour = Int64.min
    private let writeFailures = LockedValue(0)

    public init(sink: any PinFailureCountSink, maximumPendingKeys: Int, retentionDays: Int, flushInterval: Duration,
                logger: Logger, now: @escaping @Sendable () -> Int64) {
        precondition(maximumPendingKeys > 0 && retentionDays > 0, "report writer limits must be positive")
        self.sink = sink
        self.maximumPendingKeys = maximumPendingKeys
        self.retentionSeconds = Int64(retentionDays) * 86_400
        self.flushInterval = flushInterval
        self.logger = logger
        self.now = now
    }

    /// Counts one report; false when the pending table is full and the report was not counted.
    public func enqueue(_ key: PinFailureCount.Key) -> Bool {
        pending.update { pending in
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
    public var pendingKeys: Int { pending.value.count }

    /// Failed writes since start.
    public var failedWrites: Int { writeFailures.value }

    /// Starts the periodic writes.
    public func start() {
        queue.sync {
            let source = DispatchSource.makeTimerSource(queue: queue)
            let interval = DispatchTimeInterval.milliseconds(Int(max(1, flushInterval.milliseconds)))
            source.schedule(deadline: .now() + interval, repeating: interval)
            source.setEventHandler { [self] in writePending() }
            timer = source
            source.resume()
        }
    }

    /// Stops the periodic writes and writes what is pending.
    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            writePending()
        }
    }

    /// Writes what is pending now, on the writer's queue, and returns when it is written (tests, shutdown).
    public func flush() {
        queue.sync { writePending() }
    }

    /// Runs on `queue` only.
    private func writePending() {
        applyRetention()
        let batch = pending.update { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !batch.isEmpty else { return }
        do {
            try sink.addPinFailureCounts(batch.map { PinFailureCount(key: $0.key, reports: $0.value) })
        } catch {
            writeFailures.update { $0 += 1 }
            logger.error("Could not store pin-failure report counts; keeping them for the next attempt", metadata: ["error": "\(error)"])
            pending.update { pending in
                for (key, count) in batch {
                    if let current = pending[key] {
                        pending[key] = current + count
                    } else if pending.count < maximumPendingKeys {
                        pending[key] = count
                    }
                }
            }
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
