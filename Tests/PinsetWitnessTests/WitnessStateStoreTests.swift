import Foundation
import PinsetTestSupport
import PinsetStore
import PinsetTransparency
import PinsetWitness
import Testing

/// The state file's compare-and-swap, raced for real: threads on two connections to one SQLite file, as two
/// witness processes sharing it would be.
struct WitnessStateStoreTests {
    struct LostTheRace: Error {}

    static func record(_ log: TestLog, size: UInt64) throws -> WitnessedCheckpoint {
        let checkpoint = try log.checkpoint(size: size)
        return WitnessedCheckpoint(origin: log.origin, treeHead: checkpoint.treeHead, noteText: checkpoint.noteText, cosignedAt: 1_800_000_000)
    }

    @Test func racersFromTheSameSizeNeverBothAdvance() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-witness-state")
        defer { directory.remove() }
        let log = try TestLog(entries: 64)
        let stores = try (0..<2).map { _ in try WitnessStateStore(path: directory.file("state.sqlite")) }
        defer { for store in stores { try? store.close() } }
        let racers = 8
        for round in 0..<6 {
            let start = UInt64(round * racers)
            // Each racer saw `start` and tries to move the record to its own larger size.
            let winners = WinCounter()
            DispatchQueue.concurrentPerform(iterations: racers) { racer in
                let store = stores[racer % stores.count]
                let target = try? Self.record(log, size: start + UInt64(racer) + 1)
                let advanced = try? store.advance(origin: log.origin) { current in
                    guard (current?.treeHead.size ?? 0) == start, let target else { throw LostTheRace() }
                    return target
                }
                if advanced != nil { winners.increment() }
            }
            #expect(winners.count == 1, "round \(round)")
            // Move to the next round's common starting point.
            let next = try Self.record(log, size: UInt64(round + 1) * UInt64(racers))
            try stores[0].advance(origin: log.origin) { _ in next }
        }
        #expect(try stores[1].latest(origin: log.origin)?.treeHead.size == 48)
    }

    @Test func aRefusedDecisionWritesNothing() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-witness-state")
        defer { directory.remove() }
        let log = try TestLog(entries: 4)
        let store = try WitnessStateStore(path: directory.file("state.sqlite"))
        defer { try? store.close() }
        try store.advance(origin: log.origin) { _ in try Self.record(log, size: 2) }
        #expect(throws: LostTheRace.self) {
            try store.advance(origin: log.origin) { _ in throw LostTheRace() }
        }
        #expect(try store.latest(origin: log.origin)?.treeHead.size == 2)
    }

    @Test func theRecordNeverMovesBackwardNorForks() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-witness-state")
        defer { directory.remove() }
        let log = try TestLog(entries: 6)
        let fork = try TestLog(entries: 6, signer: log.signer, branch: "fork")
        let store = try WitnessStateStore(path: directory.file("state.sqlite"))
        defer { try? store.close() }
        let recorded = try store.advance(origin: log.origin) { _ in try Self.record(log, size: 6) }
        // Even a caller whose own check let it through cannot shrink the tree or swap its root: the store refuses.
        #expect(throws: WitnessStateError.self) {
            try store.advance(origin: log.origin) { _ in try Self.record(log, size: 3) }
        }
        #expect(throws: WitnessStateError.self) {
            try store.advance(origin: log.origin) { _ in try Self.record(fork, size: 6) }
        }
        #expect(try store.latest(origin: log.origin) == recorded)
        #expect(try store.all() == [recorded])
    }
}

/// Counts the racers that advanced the record.
private final class WinCounter: @unchecked Sendable {
    // `@unchecked`: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = 0

    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
