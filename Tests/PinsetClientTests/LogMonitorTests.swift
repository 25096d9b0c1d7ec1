import Crypto
import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import PinsetTransparency
import Testing

/// `LogMonitor` against a log built in the test and served through a fake fetcher: what each run lists, and each
/// refusal, which leaves the state file as it was.
@Suite struct LogMonitorTests {
    let server = FakeTrustServer()
    let directory: TemporaryDirectory
    var statePath: String { directory.file("monitor-state.json") }

    init() throws {
        directory = try TemporaryDirectory(prefix: "pinset-monitor")
    }

    func monitor(_ log: TestEntryLog) throws -> LogMonitor {
        LogMonitor(policy: try log.policy, logURL: TestEntryLog.base, fetcher: server)
    }

    func customers(_ report: LogMonitorReport) -> [String] {
        report.entries.map { $0.customer ?? "-" }
    }

    /// The state file's bytes; `nil` when there is none.
    func stateBytes() throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: statePath) else { return nil }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: statePath)))
    }

    /// A log of `size` entries (acme's versions 1 and 2 at entries 1 and 3), followed once by the monitor.
    func followedLog(size: Int = 5) throws -> TestEntryLog {
        var log = try TestEntryLog()
        try log.append(customer: "beta", version: 1)
        try log.append(customer: "acme", version: 1)
        try log.append(customer: "beta", version: 2)
        try log.append(customer: "acme", version: 2)
        try log.appendOthers(size - 4)
        return log
    }

    func expectRefusal(
        _ kind: LogMonitorError.Kind, by log: TestEntryLog, unchanged before: [UInt8]?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let logMonitor = try monitor(log)
        do {
            let report = try await logMonitor.run(statePath: statePath)
            Issue.record("accepted a checkpoint of \(report.checkpoint.checkpoint.treeSize)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        }
        #expect(try stateBytes() == before, "the state file changed", sourceLocation: sourceLocation)
    }

    @Test func aFirstRunListsEveryEntryAndASecondOnlyTheNewOnes() async throws {
        defer { directory.remove() }
        var log = try followedLog(size: 300)
        try log.publish(on: server)
        let first = try await monitor(log).run(statePath: statePath)
        #expect(first.previousTreeSize == nil)
        #expect(first.entries.map(\.index) == Array(0..<300))
        #expect(first.entries(watching: ["acme"]).map(\.index) == [1, 3])
        #expect(first.state.latestVersions["acme"] == 2)

        try log.append(customer: "acme", version: 3)
        try log.appendOthers(219)
        try log.publish(on: server)
        server.forgetRequests()
        let second = try await monitor(log).run(statePath: statePath)
        #expect(second.previousTreeSize == 300)
        #expect(second.checkpoint.checkpoint.treeSize == 520)
        #expect(second.entries.map(\.index) == Array(300..<520))
        #expect(second.entries(watching: ["acme"]).map(\.index) == [300])
        #expect(second.state.latestVersions["acme"] == 3)
        #expect(second.state.latestVersions["beta"] == 2, "versions seen in earlier runs are kept")
        let requested = server.requestedURLs.map(\.absoluteString)
        #expect(!requested.contains { $0.hasSuffix("tile/entries/000") }, "only bundles with new entries: \(requested)")
        #expect(requested.contains { $0.hasSuffix("tile/entries/002.p/8") })

        let third = try await monitor(log).run(statePath: statePath)
        #expect(third.entries.isEmpty)
        #expect(third.previousTreeSize == 520)
    }

    @Test func aSmallerCheckpointIsRefusedAsARollback() async throws {
        defer { directory.remove() }
        let (log, before) = try await readLog()
        try log.publish(on: server, size: 3)
        try await expectRefusal(.rollback, by: log, unchanged: before)
        #expect(FileManager.default.fileExists(atPath: statePath + ".refused-checkpoint"), "the refused checkpoint is kept as evidence")
    }

    /// A log the monitor followed once, the state file that run saved, and a fork of the log under the same key
    /// (entry 1 rewritten), as only a holder of the log's key makes.
    /// `followedLog()` served and read once by the monitor, with the state file that run left.
    func readLog() async throws -> (log: TestEntryLog, state: [UInt8]?) {
        let log = try followedLog()
        try log.publish(on: server)
        _ = try await monitor(log).run(statePath: statePath)
        return (log, try stateBytes())
    }

    func followedLogAndAFork() async throws -> (log: TestEntryLog, fork: TestEntryLog, state: [UInt8]?) {
        let (log, state) = try await readLog()
        var entries = log.entries
        entries[1] = try TestEntryLog.entry(customer: "acme", version: 99)
        return (log, TestEntryLog(reusingKeysOf: log, entries: entries), state)
    }

    @Test func anotherRootAtTheSameSizeIsRefusedAsAFork() async throws {
        defer { directory.remove() }
        let (log, fork, before) = try await followedLogAndAFork()
        try fork.publish(on: server)
        try await expectRefusal(.fork, by: log, unchanged: before)
    }

    @Test func aLargerTreeThatDoesNotExtendTheKeptOneIsRefusedAsAFork() async throws {
        defer { directory.remove() }
        var (log, fork, before) = try await followedLogAndAFork()
        try fork.append(customer: "acme", version: 100)
        try fork.publish(on: server)
        try await expectRefusal(.fork, by: log, unchanged: before)
    }

    @Test func entryBundlesThatDoNotMatchTheLeafTilesAreRefused() async throws {
        defer { directory.remove() }
        var log = try followedLog()
        try log.publish(on: server)
        _ = try await monitor(log).run(statePath: statePath)
        let before = try stateBytes()
        try log.append(customer: "acme", version: 3)
        try log.publish(on: server)
        // The log hashed acme version 3, but serves a bundle that shows version 4 in its place.
        var shown = log.entries
        shown[5] = try TestEntryLog.entry(customer: "acme", version: 4)
        server.serve(try EntryBundle.encode(shown), at: TestEntryLog.base.appendingPathComponent("tile/entries/000.p/6"))
        try await expectRefusal(.entriesMismatch, by: log, unchanged: before)
    }

    @Test func entriesAndLeafTilesThatDoNotGiveTheSignedRootAreRefused() async throws {
        defer { directory.remove() }
        let log = try followedLog()
        try log.publish(on: server)
        // Bundle and level-0 tile agree with each other, on an entry the signed root does not commit to. (With a kept
        // checkpoint, the consistency proof would already read the forged tile and refuse it as a fork.)
        var shown = log.entries
        shown[4] = try TestEntryLog.entry(customer: "acme", version: 4)
        server.serve(try EntryBundle.encode(shown), at: TestEntryLog.base.appendingPathComponent("tile/entries/000.p/5"))
        server.serve(
            TileLayout.encode(hashes: shown.map { TreeHasher.leafHash(ofEntry: $0) }),
            at: TestEntryLog.base.appendingPathComponent("tile/0/000.p/5"))
        try await expectRefusal(.entriesMismatch, by: log, unchanged: nil)
    }

    @Test func aCheckpointNotSignedByTheLogKeyIsRefused() async throws {
        defer { directory.remove() }
        var log = try followedLog()
        try log.publish(on: server)
        _ = try await monitor(log).run(statePath: statePath)
        let before = try stateBytes()
        try log.append(customer: "acme", version: 3)
        let impostor = try Ed25519NoteSigner(keyName: TestPinSetLog.origin, privateKey: Curve25519.Signing.PrivateKey())
        try log.publish(on: server, signer: impostor)
        try await expectRefusal(.untrustedCheckpoint, by: log, unchanged: before)
    }

    /// What the holder of the log key gets by signing a checkpoint of a tree of 2^62 entries: a refusal that leaves
    /// the state as it was, not a monitor that tries to list 2^54 entry bundles and runs out of memory.
    @Test func aCheckpointClaimingMoreEntriesThanOneRunReadsIsRefused() async throws {
        defer { directory.remove() }
        let (log, before) = try await readLog()
        for size: UInt64 in [1 << 62, UInt64(Int64.max)] {
            let claimed = try Checkpoint(origin: TestPinSetLog.origin, treeSize: size, rootHash: TreeHasher.leafHash(ofEntry: [1]))
            server.serve(Array(try log.hashes.signedNote(for: claimed).encoded.utf8), at: TestEntryLog.base.appendingPathComponent("checkpoint"))
            // A first run, which reads from entry 0: no consistency proof stands in the way.
            try FileManager.default.removeItem(atPath: statePath)
            let logMonitor = try monitor(log)
            do {
                let report = try await logMonitor.run(statePath: statePath)
                Issue.record("accepted a checkpoint of \(report.checkpoint.checkpoint.treeSize)")
            } catch {
                #expect(error.kind == .unreachable, "\(error)")
                #expect(error.reason.contains("more than the 16777216 one run reads"), "\(error.reason)")
            }
            #expect(try stateBytes() == nil, "a refused run wrote a state file")
            try Data(try #require(before)).write(to: URL(fileURLWithPath: statePath))
        }
    }

    @Test func anEntryThatIsNotAPinSetEntryIsReportedAndTheRunCompletes() async throws {
        defer { directory.remove() }
        var log = try followedLog()
        log.append(entry: Array("not a pin-set entry\n".utf8))
        try log.publish(on: server)
        let report = try await monitor(log).run(statePath: statePath)
        #expect(report.unparsableEntries.map(\.index) == [5])
        #expect(report.entries(watching: ["acme"]).map(\.index) == [1, 3, 5], "an unparsable entry is shown to every watcher")
        #expect(FileManager.default.fileExists(atPath: statePath))
    }
}
