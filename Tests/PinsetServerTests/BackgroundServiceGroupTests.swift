import Foundation
import PinsetCore
@testable import PinsetServer
import Testing

/// Services started in order and shut down in reverse, only those that started, and side by side when asked.
struct BackgroundServiceGroupTests {
    final class Journal: Sendable {
        private let entries = LockedValue<[String]>([])
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    struct Refused: Error {}

    struct RecordingService: BackgroundService {
        let name: String
        let journal: Journal
        var refusesToStart = false
        /// A service whose shutdown only ends once this one's shutdown has begun (or, if it never does, after
        /// `awaitGivesUpAfter`): two such services can both finish quickly only when their shutdowns overlap.
        var awaitsShutdownOf: String?
        var awaitGivesUpAfter: Duration = .seconds(30)

        func start() throws {
            if refusesToStart { throw Refused() }
            journal.note("start \(name)")
        }

        func shutdown() async {
            journal.note("begin shutdown \(name)")
            if let other = awaitsShutdownOf {
                let deadline = ContinuousClock.now + awaitGivesUpAfter
                while !journal.all.contains("begin shutdown \(other)") && ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
            journal.note("end shutdown \(name)")
        }
    }

    @Test func startsInOrderAndShutsDownInReverse() async throws {
        let journal = Journal()
        let group = BackgroundServiceGroup(["a", "b", "c"].map { RecordingService(name: $0, journal: journal) })
        try group.start()
        await group.shutdown()
        #expect(journal.all == [
            "start a", "start b", "start c",
            "begin shutdown c", "end shutdown c", "begin shutdown b", "end shutdown b", "begin shutdown a", "end shutdown a",
        ])
        // A second shutdown has nothing left to stop.
        await group.shutdown()
        #expect(journal.all.count == 9)
    }

    @Test func aServiceThatCannotStartLeavesOnlyTheStartedOnesToShutDown() async throws {
        let journal = Journal()
        let group = BackgroundServiceGroup([
            RecordingService(name: "a", journal: journal),
            RecordingService(name: "b", journal: journal, refusesToStart: true),
            RecordingService(name: "c", journal: journal),
        ])
        #expect(throws: Refused.self) { try group.start() }
        await group.shutdown()
        #expect(journal.all == ["start a", "begin shutdown a", "end shutdown a"])
    }

    /// Two shutdowns side by side overlap instead of running one after the other: the report writer's and the
    /// public listener's waits overlap instead of adding up. Each of the two ends only once the other has begun, so
    /// the order of the journal shows the overlap whatever the machine's load (run one after the other, the first
    /// would wait out its 30 s and end before the second began).
    @Test func concurrentShutdownsOverlap() async throws {
        let journal = Journal()
        let group = BackgroundServiceGroup([
            RecordingService(name: "first", journal: journal),
            BackgroundServiceGroup([
                RecordingService(name: "listener", journal: journal, awaitsShutdownOf: "writer"),
                RecordingService(name: "writer", journal: journal, awaitsShutdownOf: "listener"),
            ], shutdown: .concurrent),
            RecordingService(name: "last", journal: journal),
        ])
        try group.start()
        await group.shutdown()
        let entries = journal.all
        try #require(entries.count == 12, "\(entries)")
        #expect(entries.prefix(4) == ["start first", "start listener", "start writer", "start last"])
        #expect(entries[4...5] == ["begin shutdown last", "end shutdown last"])
        // Both began before either ended, and both ended before the service started first was stopped.
        let middle = Array(entries[6...9])
        #expect(Set(middle.prefix(2)) == ["begin shutdown listener", "begin shutdown writer"], "the two shutdowns ran one after the other: \(entries)")
        #expect(Set(middle.suffix(2)) == ["end shutdown listener", "end shutdown writer"])
        #expect(entries.suffix(2) == ["begin shutdown first", "end shutdown first"])
    }
}
