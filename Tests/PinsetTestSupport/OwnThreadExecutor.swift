import Dispatch

/// A task executor with a thread of its own, for a test's loop that must keep its pace (an app polling every
/// 100 ms, say) while the suites run side by side.
///
/// Tests run on Swift's cooperative pool, which has a thread per core (two on a CI machine), and a synchronous test
/// holds its thread for as long as it runs. With several such tests at once, work another test queued on the pool
/// waits until one of them ends: a client loop started with `Task { ... }` can then go minutes without a round.
/// Started with `Task(executorPreference: OwnThreadExecutor())`, the loop's code and that of the default actors it
/// calls (`PinsetUpdater`) run on a serial queue of the executor's instead, which Dispatch gives a thread whether or
/// not the pool is busy.
@available(macOS 15.0, iOS 18.0, *)
public final class OwnThreadExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    public init(label: String = "pinset.test.own-thread") {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
