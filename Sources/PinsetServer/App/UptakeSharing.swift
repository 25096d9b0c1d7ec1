import Dispatch
import Foundation
import Logging
import PinsetCore
import PinsetStore

/// Where an instance shares its uptake figures: the store, which every instance and admin command reads.
public protocol UptakeSharingSink: Sendable {
    func replaceUptakeSnapshot(_ snapshot: UptakeSnapshot) throws
    func removeUptakeSnapshot(instance: String) throws
}

extension PinStore: UptakeSharingSink {}

/// Writes this instance's uptake figures and serving settings to the store on a schedule, so that
/// `pinset rotation status`, run anywhere, sees what every running instance counted and how long apps may go on
/// accepting the bundles it serves. Each write replaces the instance's previous one and counts for three
/// intervals; shutdown removes it.
///
/// Off the request path: it copies the counter's figures once per interval. A failed write is logged and tried
/// again at the next interval; the figures then age out, and the gate says no server shares figures rather than
/// trusting old ones.
///
/// Thread-safe: the timer lives on the service's own queue.
public final class UptakeSharing: @unchecked Sendable {
    /// A random id per process: two instances on one host never overwrite each other's figures.
    public let instance = UUID().uuidString.lowercased()
    private let counter: UptakeCounter
    private let sink: any UptakeSharingSink
    private let servingTimes: ServingTimes
    private let interval: Duration
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let queue = DispatchQueue(label: "pinset.uptake-sharing")
    /// Confined to `queue`.
    private var timer: (any DispatchSourceTimer)?
    private var lastWriteFailed = false

    public init(counter: UptakeCounter, sink: any UptakeSharingSink, servingTimes: ServingTimes, interval: Duration, logger: Logger,
                now: @escaping @Sendable () -> Date = Date.init) {
        self.counter = counter
        self.sink = sink
        self.servingTimes = servingTimes
        self.interval = interval
        self.logger = logger
        self.now = now
    }

    /// Writes the figures now, then on every interval.
    public func start() {
        queue.sync {
            share()
            let source = DispatchSource.makeTimerSource(queue: queue)
            let period = DispatchTimeInterval.milliseconds(Int(max(1, interval.milliseconds)))
            source.schedule(deadline: .now() + period, repeating: period)
            source.setEventHandler { [self] in share() }
            timer = source
            source.resume()
        }
    }

    /// Stops the schedule and removes this instance's figures, so that the gate no longer counts them.
    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            do {
                try sink.removeUptakeSnapshot(instance: instance)
            } catch {
                logger.warning("Could not remove this instance's shared uptake figures; they age out on their own", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes the figures now, on the service's queue (tests).
    public func shareNow() {
        queue.sync { share() }
    }

    /// At most this many itemized versions per customer are shared, the most fetched; the others are shared as
    /// "other". Clients choose the versions they claim, so without a bound each could cost a row per write.
    public static let maximumSharedVersions = UptakeCounter.maximumVersionsPerBucket

    /// The snapshot of the counter at `time`.
    public func snapshot(at time: Date) -> UptakeSnapshot {
        let summaries = counter.summary(latest: [:], at: time)
        var fetches: [CustomerName: [Int64: Int]] = [:]
        for (customer, summary) in summaries {
            var versions = summary.versions
            var other = summary.otherVersions
            if versions.count > Self.maximumSharedVersions {
                let kept = versions.sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(Self.maximumSharedVersions)
                other += versions.values.reduce(0, +) - kept.reduce(0) { $0 + $1.value }
                versions = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
            if other > 0 { versions[UptakeSnapshot.otherVersion] = other }
            if summary.unknown > 0 { versions[UptakeSnapshot.unknownVersion] = summary.unknown }
            fetches[customer] = versions
        }
        return UptakeSnapshot(
            instance: instance, windowSeconds: counter.windowSeconds, servingTimes: servingTimes, takenAt: time,
            validUntil: time.addingTimeInterval(3 * Double(interval.milliseconds) / 1000), fetches: fetches
        )
    }

    private func share() {
        do {
            try sink.replaceUptakeSnapshot(snapshot(at: now()))
            if lastWriteFailed { logger.info("Sharing uptake figures through the database again") }
            lastWriteFailed = false
        } catch {
            if !lastWriteFailed {
                logger.warning("Could not share uptake figures through the database; 'pinset rotation status' will not count this instance until a write succeeds", metadata: ["error": "\(error)"])
            }
            lastWriteFailed = true
        }
    }
}

/// The uptake sharing schedule as a background service.
struct UptakeSharingService: BackgroundService {
    let sharing: UptakeSharing

    func start() {
        sharing.start()
    }

    func shutdown() async {
        // `stop` writes to the store: on a Dispatch thread, not a cooperative one the listeners need meanwhile.
        await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                sharing.stop()
                stopped.resume()
            }
        }
    }
}
