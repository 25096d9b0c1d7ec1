import Foundation
import PinsetTestSupport
import Testing

/// A flood of distinct reports from many addresses, each under the per-address limit, against a customer whose
/// hour already holds 100,000 stored counts: admin edits keep succeeding promptly, and `pinset reports` stays
/// short because reports for hosts the customer does not pin share one counted bucket.
@Suite(.serialized) struct ReportsFloodTests {
    static let storedRows = 100_000
    static let addresses = 50

    @Test(arguments: ReportsShutdownTests.Backend.allCases) func adminEditsSucceedWhileReportsFloodAFullHour(_ backend: ReportsShutdownTests.Backend) async throws {
        let databaseURL = backend == .postgreSQL ? try SharedTestPostgres.freshDatabase() : nil
        let environment = backend == .postgreSQL ? SharedTestPostgres.environment : [:]
        let cli = try PinsetCLI.initialized(databaseURL: databaseURL, environment: environment)
        defer { cli.remove() }
        let pinned = try cli.addAcmePinnedToLeafAndBackup()
        let leafPEM = try String(contentsOfFile: pinned.cert, encoding: .utf8)
        try Self.storeRows(Self.storedRows, databaseURL: databaseURL, cli: cli)

        let server = try RunningServer(cli: cli, extraConfiguration: [
            "reports": ["host": "127.0.0.1", "port": 0, "proxyProtocol": true],
        ])
        defer { server.stop() }
        let port = try ReportsListenerTests.waitForReportsPort(of: server)

        // Each address sends one distinct report a second (the default limit of 60 a minute), half of them for
        // hosts acme does not pin, as a flood of forged reports would, until every edit below is done (at most ten
        // minutes). The senders block in socket calls, so they run on threads of their own, off the cooperative pool.
        let flood = ReportsShutdownTests.Flood()
        let senders = DispatchGroup()
        for address in 0..<Self.addresses {
            senders.enter()
            Thread {
                defer { senders.leave() }
                for index in 0..<600 where flood.isRunning {
                    let started = Date()
                    let host = index % 2 == 0 ? "api.example.com" : "h\(address)-\(index).attacker.example"
                    let body = TrustKitReportFixture.json(leafPEM: leafPEM, hostname: host, vendorID: "install-\(address)-\(index)",
                                                          appVersion: "\(address).\(index)")
                    let client = "10.0.0.\(address + 1)"
                    flood.record((try? ReportsListenerTests.post(body, port: port, proxiedFrom: client)) ?? 0)
                    let rest = 1 - Date().timeIntervalSince(started)
                    if rest > 0 && flood.isRunning { usleep(UInt32(rest * 1_000_000)) }
                }
            }.start()
        }
        try await Task.sleep(for: .seconds(2))
        let acceptedBeforeEdits = flood.acceptedCount
        var editSeconds: [Double] = []
        for edit in 0..<5 {
            let hash = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let started = Date()
            let result = try cli.run(["pin", "add", "--skip-live-check", "--reason", "edit \(edit) during a report flood", "acme", "api.example.com", "--hash", hash])
            editSeconds.append(Date().timeIntervalSince(started))
            #expect(result.status == 0, "edit \(edit) failed during the flood: \(result.combined)")
            try await Task.sleep(for: .milliseconds(700))
        }
        let acceptedDuringEdits = flood.acceptedCount - acceptedBeforeEdits
        flood.stop()
        await withCheckedContinuation { finished in senders.notify(queue: .global()) { finished.resume() } }
        #expect(flood.acceptedCount >= Self.addresses * 3, "the flood was answered 202 \(flood.acceptedCount) times of \(flood.sentCount)")
        // The edits went through while reports kept being stored, not after the flood: one batch of at most 200
        // indexed statements is all an edit waits for (SQLite gives up on a lock after 5 s, failing the edit). The
        // bound on their durations is only generous: a debug build's commands on a busy machine take seconds.
        #expect(acceptedDuringEdits >= Self.addresses, "only \(acceptedDuringEdits) reports were answered 202 while the edits ran")
        #expect(editSeconds.allSatisfy { $0 < 30 }, "edit durations during the flood: \(editSeconds)")
        #expect(server.stop() == 0)

        var arguments = ["reports", "acme", "--since", "2h", "--json", "--data-dir", cli.dataDir]
        if let databaseURL { arguments += ["--database", databaseURL] }
        let result = try cli.run(arguments)
        #expect(result.status == 0, "\(result.combined)")
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]] ?? []
        // Thousands of distinct reports, at most four rows: the stored counts, the flood's counts of api.example.com
        // (another result and key), the unpublished-host bucket, and the other bucket once the flood's kinds pass the
        // hour's row cap (a flood that outlasts 40 s does: it runs until the edits are done).
        #expect(rows.count <= 4, "pinset reports shows \(rows.count) rows after the flood: \(rows.map { $0.filter { $0.key != "appVersions" } })")
        let unpublished = rows.first { $0["bucket"] as? String == "unpublished-host" }
        #expect((unpublished?["reports"] as? Int ?? 0) >= flood.acceptedCount / 2 - Self.addresses, "\(rows.map { $0.filter { $0.key != "appVersions" } })")
        let stored = rows.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) }
        #expect(stored >= Self.storedRows + flood.acceptedCount, "stored \(stored), answered 202 to \(flood.acceptedCount) after \(Self.storedRows) stored")
    }

    /// `count` distinct counts of acme's api.example.com in the current hour, written straight into the table as a
    /// long flood would have left them.
    static func storeRows(_ count: Int, databaseURL: String?, cli: PinsetCLI) throws {
        let hour = Int(Date().timeIntervalSince1970) / 3600 * 3600
        func insert(_ series: String) -> String {
            """
            INSERT INTO pin_failure_report_hour (customer_id, hour, hostname, validation_result, leaf_spki_sha256, pinset_version, app_version, reports)
            SELECT (SELECT id FROM customer WHERE name = 'acme'), \(hour), 'api.example.com', 1, NULL, NULL, 'stored-' || n, 1 FROM \(series);
            """
        }
        if let databaseURL {
            let name = String(databaseURL.split(separator: "/").last ?? "")
            try SharedTestPostgres.server().psql(insert("generate_series(1, \(count)) AS n") + "\nANALYZE pin_failure_report_hour;", database: name)
        } else {
            let sql = insert("(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < \(count)) SELECT n FROM s)")
            let result = try ProcessRunner.run("sqlite3", [cli.database], stdin: Array(sql.utf8), timeout: 120)
            guard result.status == 0 else { throw Failure("sqlite3 could not store the rows: \(result.stderr)") }
        }
    }
}
