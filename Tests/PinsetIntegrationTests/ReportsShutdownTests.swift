import Foundation
import PinsetTestSupport
import Testing

/// Stopping `pinset serve` as systemd does (SIGTERM, then SIGKILL after the unit's `TimeoutStopSec`) while a flood
/// of distinct reports arrives over real sockets loses none of the reports it answered 202.
@Suite(.serialized) struct ReportsShutdownTests {
    enum Backend: String, CaseIterable, Sendable {
        case sqlite, postgreSQL
    }

    /// `TimeoutStopSec` of deploy/systemd/pinset.service.
    static let unitStopTimeout: TimeInterval = 20

    /// Distinct counts the server holds before it answers 503. What a stop must store is bounded by this table
    /// (and the batch being written), and the server gives the write 8 s: the bound keeps that backlog one that a
    /// debug build on a busy machine writes in time, where the default (10,000) lets a flood outrun the writer
    /// there, and a flood of distinct reports still fills it many times over.
    static let maxPendingCounts = 400

    /// What the flooding tasks share: whether to go on, and the reports answered 202.
    final class Flood: @unchecked Sendable {
        private let lock = NSLock()
        private var running = true
        private var accepted = 0
        private var sent = 0

        var isRunning: Bool { lock.withLock { running } }
        var acceptedCount: Int { lock.withLock { accepted } }
        var sentCount: Int { lock.withLock { sent } }
        func stop() { lock.withLock { running = false } }
        func record(_ status: Int) {
            lock.withLock {
                sent += 1
                if status == 202 { accepted += 1 }
            }
        }
    }

    @Test(arguments: Backend.allCases) func everyReportAnswered202IsStoredWhenStoppedUnderAFlood(_ backend: Backend) async throws {
        let databaseURL = backend == .postgreSQL ? try SharedTestPostgres.freshDatabase() : nil
        let environment = backend == .postgreSQL ? SharedTestPostgres.environment : [:]
        let cli = try PinsetCLI.initialized(databaseURL: databaseURL, environment: environment)
        defer { cli.remove() }
        let pinned = try cli.addAcmePinnedToLeafAndBackup()
        let leafPEM = try String(contentsOfFile: pinned.cert, encoding: .utf8)
        let server = try RunningServer(cli: cli, extraConfiguration: [
            "reports": ["host": "127.0.0.1", "port": 0, "reportsPerMinutePerAddress": 1_000_000, "maxPendingCounts": Self.maxPendingCounts],
        ])
        defer { server.stop() }
        let port = try ReportsListenerTests.waitForReportsPort(of: server)

        // Distinct installations and app versions: every report is a new count, the costliest kind to store.
        // The senders block in socket calls, so they run on threads of their own: on the cooperative pool (two
        // threads on two cores) they would keep this task from waking until they ran out of reports.
        let flood = Flood()
        let senders = DispatchGroup()
        for sender in 0..<8 {
            senders.enter()
            Thread {
                defer { senders.leave() }
                for index in 0..<40_000 where flood.isRunning {
                    let body = TrustKitReportFixture.json(leafPEM: leafPEM, vendorID: "install-\(sender)-\(index)", appVersion: "\(sender).\(index)")
                    let status = (try? ReportsListenerTests.post(body, port: port)) ?? 0
                    flood.record(status)
                    // A full pending table answers 503 and the app retries later, as this sender does, instead of
                    // spending the processor the writer needs on refusals.
                    if status == 503 { usleep(20_000) }
                }
            }.start()
        }
        // Let the flood build up stored rows and pending counts, then stop the server while it goes on. The bound
        // only keeps a broken server from holding the test: how soon 3000 reports are stored depends on the machine.
        let floodStart = Date()
        while flood.acceptedCount < 3000 && Date().timeIntervalSince(floodStart) < 180 {
            try await Task.sleep(for: .milliseconds(100))
        }
        let stopStart = Date()
        kill(server.process.pid, SIGTERM)
        while server.process.isRunning && Date().timeIntervalSince(stopStart) < Self.unitStopTimeout {
            try await Task.sleep(for: .milliseconds(50))
        }
        let stoppedInTime = !server.process.isRunning
        if !stoppedInTime { kill(server.process.pid, SIGKILL) }
        let stopSeconds = Date().timeIntervalSince(stopStart)
        flood.stop()
        await withCheckedContinuation { finished in senders.notify(queue: .global()) { finished.resume() } }
        server.process.process.waitUntilExit()

        #expect(stoppedInTime, "pinset serve did not exit within the unit's \(Self.unitStopTimeout) s and was killed")
        #expect(server.process.process.terminationStatus == 0)
        let accepted = flood.acceptedCount
        #expect(accepted >= 3000, "the flood was answered 202 \(accepted) times of \(flood.sentCount)")

        var arguments = ["reports", "--since", "2h", "--json", "--data-dir", cli.dataDir]
        if let databaseURL { arguments += ["--database", databaseURL] }
        let result = try cli.run(arguments)
        #expect(result.status == 0, "\(result.combined)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]] ?? []
        let stored = rows.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) }
        // A report counted while its connection was being closed can be stored without a 202 reaching the
        // sender, so the store may hold more than the 202s, never fewer.
        #expect(stored >= accepted, "stored \(stored) reports, answered 202 to \(accepted); stopping took \(stopSeconds) s")
        #expect(rows.contains { $0["bucket"] as? String == "other" }, "distinct kinds beyond the row cap are counted in the other bucket")
        let log = server.process.stdout + server.process.stderr
        #expect(log.contains("Stored every accepted pin-failure report before stopping"), "\(log.suffix(2000))")
    }
}
