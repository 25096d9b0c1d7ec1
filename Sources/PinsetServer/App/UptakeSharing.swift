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
/// Thread-safe: the schedule runs on its own queue.
public final class UptakeSharing: Sendable {
    /// A random id per process: two instances on one host never overwrite each other's figures.
    public let instance = UUID().uuidString.lowercased()
    private let counter: UptakeCounter
    private let sink: any UptakeSharingSink
    private let servingTimes: ServingTimes
    private let interval: Duration
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let schedule = LockedValue<RepeatingTask?>(nil)

    public init(counter: UptakeCounter, sink: any UptakeSharingSink, servingTimes: ServingTimes, interval: Duration, logger: Logger,
                now: @escaping @Sendable () -> Date = Date.init) {
        self.counter = counter
        self.sink = sink
        self.servingTimes = servingTimes
        self.interval = interval
        self.logger = logger
        self.now = now
    }

    /// The schedule, made once.
    private var task: RepeatingTask {
        schedule.withLock { task in
            if let task { return task }
            let made = RepeatingTask(
                label: "pinset.uptake-sharing", interval: interval, logger: logger,
                failure: "Could not share uptake figures through the database; 'pinset rotation status' will not count this instance until a write succeeds",
                recovery: "Sharing uptake figures through the database again"
            ) { [weak self] in try self?.share() }
            task = made
            return made
        }
    }

    /// Writes the figures now, then on every interval.
    public func start() {
        task.start()
    }

    /// Stops the schedule and removes this instance's figures, so that the gate no longer counts them.
    public func stop() {
        task.stop {
            do {
                try sink.removeUptakeSnapshot(instance: instance)
            } catch {
                logger.warning("Could not remove this instance's shared uptake figures; they age out on their own", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes the figures now, in turn with the schedule (tests).
    public func shareNow() {
        task.runNow()
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

    private func share() throws {
        try sink.replaceUptakeSnapshot(snapshot(at: now()))
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
