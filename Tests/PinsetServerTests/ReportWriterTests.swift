import Foundation
import Logging
import PinsetCore
@testable import PinsetServer
import PinsetStore
import Testing

/// The writer that takes accepted reports off the connection queues: bounded, batched, retained.
struct ReportWriterTests {
    final class RecordingSink: PinFailureCountSink, @unchecked Sendable {
        private let lock = NSLock()
        private var _batches: [[PinFailureCount]] = []
        private var _deletedBefore: [Int64] = []
        private var _failing = false
        var batches: [[PinFailureCount]] { lock.withLock { _batches } }
        var deletedBefore: [Int64] { lock.withLock { _deletedBefore } }
        var failing: Bool {
            get { lock.withLock { _failing } }
            set { lock.withLock { _failing = newValue } }
        }

        struct Failure: Error {}

        func addPinFailureCounts(_ counts: [PinFailureCount], maximumRowsPerCustomerHour: Int) throws -> Int {
            try lock.withLock {
                if _failing { throw Failure() }
                _batches.append(counts)
                return counts.count
            }
        }

        func deletePinFailureCounts(before hour: Int64) throws -> Int {
            lock.withLock { _deletedBefore.append(hour) }
            return 0
        }
    }

    func key(_ host: String) -> PinFailureCount.Key {
        PinFailureCount.Key(customer: try! CustomerName("acme"), hour: 7200, hostname: host, validationResult: 1,
                            leafSPKISHA256: nil, pinsetVersion: nil, appVersion: "1.0")
    }

    func writer(_ sink: RecordingSink, maximumPendingKeys: Int = 3, batchSize: Int = 200, now: Int64 = 7300) -> ReportWriter {
        ReportWriter(sink: sink, maximumPendingKeys: maximumPendingKeys, retentionDays: 2, flushInterval: .seconds(60),
                     batchSize: batchSize, batchPause: .zero, logger: Logger(label: "test"), now: { now })
    }

    @Test func identicalReportsBecomeOneCountWrittenInOneBatch() {
        let sink = RecordingSink()
        let writer = writer(sink)
        for _ in 0..<500 { #expect(writer.enqueue(key("a.example.com"))) }
        #expect(writer.enqueue(key("b.example.com")))
        writer.flush()
        #expect(sink.batches.count == 1)
        let counts = Dictionary(uniqueKeysWithValues: sink.batches[0].map { ($0.key.hostname, $0.reports) })
        #expect(counts == ["a.example.com": 500, "b.example.com": 1])
        writer.flush()
        #expect(sink.batches.count == 1, "nothing pending writes nothing")
    }

    @Test func newKeysAreRefusedWhileThePendingTableIsFull() {
        let writer = writer(RecordingSink(), maximumPendingKeys: 2)
        #expect(writer.enqueue(key("a.example.com")))
        #expect(writer.enqueue(key("b.example.com")))
        #expect(!writer.enqueue(key("c.example.com")))
        #expect(writer.enqueue(key("a.example.com")), "an existing key still counts")
        #expect(writer.pendingKeys == 2)
    }

    @Test func aFailedWriteKeepsTheCountsForTheNextOne() {
        let sink = RecordingSink()
        let writer = writer(sink)
        _ = writer.enqueue(key("a.example.com"))
        sink.failing = true
        writer.flush()
        #expect(writer.failedWrites == 1)
        #expect(writer.pendingKeys == 1)
        sink.failing = false
        _ = writer.enqueue(key("a.example.com"))
        writer.flush()
        #expect(sink.batches.last?.first?.reports == 2)
    }

    @Test func retentionDeletesOlderHoursOncePerHour() {
        let sink = RecordingSink()
        let writer = writer(sink, now: 10 * 86_400 + 1_234)
        writer.flush()
        writer.flush()
        #expect(sink.deletedBefore == [10 * 86_400 - 2 * 86_400])
    }

    @Test func stopWritesWhatIsPending() {
        let sink = RecordingSink()
        let writer = writer(sink)
        writer.start()
        _ = writer.enqueue(key("a.example.com"))
        #expect(writer.stop(deadline: .seconds(5)) == 0)
        #expect(sink.batches.flatMap { $0 }.map(\.key.hostname) == ["a.example.com"])
    }

    @Test func pendingCountsAreWrittenInSmallBatches() {
        let sink = RecordingSink()
        let writer = writer(sink, maximumPendingKeys: 1000, batchSize: 100)
        for index in 0..<450 { #expect(writer.enqueue(key("h\(index).example.com"))) }
        writer.flush()
        #expect(sink.batches.map(\.count) == [100, 100, 100, 100, 50], "each batch is one short transaction")
        #expect(writer.pendingKeys == 0)
    }

    @Test func stopReportsWhatItCouldNotWriteBeforeItsDeadline() {
        let sink = RecordingSink()
        let writer = writer(sink, maximumPendingKeys: 10)
        for _ in 0..<3 { _ = writer.enqueue(key("a.example.com")) }
        _ = writer.enqueue(key("b.example.com"))
        sink.failing = true
        #expect(writer.stop(deadline: .milliseconds(200)) == 4, "the exact number of accepted reports not stored")
    }
}
