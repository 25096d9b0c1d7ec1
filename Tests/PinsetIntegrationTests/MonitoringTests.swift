import Foundation
import PinsetCore
import PinsetStore
import PinsetTestSupport
import Testing

/// The server's scheduled live-chain monitoring against real TLS servers on loopback: a host whose server moves
/// to an unpinned key shows as failing in /status, the metrics and `pinset check`, and recovers when it moves
/// back; 1,000 hosts are checked with a bounded number of connections while bundles keep being served.
@Suite(.serialized) struct MonitoringTests {
    static func status(_ server: RunningServer, in directory: TemporaryDirectory) throws -> [String: Any] {
        let response = try CurlResponse.get("\(server.baseURL)/status", in: directory)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func monitoring(_ server: RunningServer, in directory: TemporaryDirectory) throws -> [String: Any] {
        try #require(try status(server, in: directory)["monitoring"] as? [String: Any])
    }

    /// The value of `pinset_monitored_hosts{state="STATE"}` in /metrics.
    static func monitoredHostsMetric(_ server: RunningServer, state: String, in directory: TemporaryDirectory) throws -> Double? {
        let text = String(decoding: try CurlResponse.get("\(server.baseURL)/metrics", in: directory).body, as: UTF8.self)
        let prefix = "pinset_monitored_hosts{state=\"\(state)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    /// Polls /status every 100 ms, for at most `timeout` seconds, until `condition` holds for its monitoring object.
    static func waitForMonitoring(_ server: RunningServer, in directory: TemporaryDirectory, timeout: TimeInterval = 30, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String: Any] = [:]
        while Date() < deadline {
            last = try monitoring(server, in: directory)
            if condition(last) { return last }
            usleep(100_000)
        }
        return last
    }

    static func counts(_ monitoring: [String: Any]) -> [String: Int] { monitoring["counts"] as? [String: Int] ?? [:] }

    /// Customer `bulk` with `hosts` pinned hosts, in one transaction through the store.
    static func addBulkCustomer(_ cli: PinsetCLI, hosts count: Int) throws {
        let store = try PinStore.open(path: cli.database)
        let spare = try PinMaterial.pin(base64SPKIHash: LiveChainGuardTests.spareHash)
        let hosts = try (1...count).map { HostPins(hostname: try Hostname(String(format: "h%04d.bulk.example.test", $0)), pins: [spare]) }
        try store.importCustomers([CustomerImport(name: try CustomerName("bulk"), hosts: hosts, ownSigningIdentity: nil, origin: "test")], actor: "test-admin")
    }

    /// A server whose monitor reaches every host at `listener`, one pass every 10 minutes: the first pass runs
    /// while the test looks.
    static func serverMonitoring(_ cli: PinsetCLI, at listener: ConnectionCountingListener, timeoutSeconds: Double, concurrency: Int) throws -> RunningServer {
        try RunningServer(cli: cli, extraConfiguration: [
            "monitoring": ["intervalSeconds": 600, "timeoutSeconds": timeoutSeconds, "concurrency": concurrency,
                           "connectTo": ["*": "127.0.0.1:\(listener.port)"]],
        ])
    }

    /// SIGTERM in the middle of a long pass: no further check starts, so the server exits cleanly instead of
    /// holding shutdown until every host has been checked (200 hosts × 1 s, 2 at a time, would take 100 s).
    @Test func stoppingTheServerDoesNotWaitForTheRestOfAPass() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        try Self.addBulkCustomer(cli, hosts: 200)
        let listener = try ConnectionCountingListener(hold: 1)
        defer { listener.stop() }
        let server = try Self.serverMonitoring(cli, at: listener, timeoutSeconds: 3, concurrency: 2)
        #expect(server.process.waitFor(timeout: 30) { listener.accepted >= 2 })
        // RunningServer.stop sends SIGTERM and kills the server if it has not exited after 15 s.
        #expect(server.stop() == 0, "\(server.process.stderr)")
        #expect(listener.accepted < 40, "\(listener.accepted) checks started")
    }

    /// SIGTERM while a check waits on a peer that accepts and then sends nothing: the check is abandoned, so
    /// the server exits within RunningServer's 15 s instead of waiting out the 60 s handshake timeout.
    @Test func stoppingTheServerAbandonsAHandshakeInProgress() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        try Self.addBulkCustomer(cli, hosts: 1)
        let listener = try ConnectionCountingListener(hold: 40)
        defer { listener.stop() }
        let server = try Self.serverMonitoring(cli, at: listener, timeoutSeconds: 60, concurrency: 1)
        #expect(server.process.waitFor(timeout: 30) { listener.accepted >= 1 })
        #expect(server.stop() == 0, "\(server.process.stderr)")
    }

    /// SIGTERM while a check waits on a connection attempt that gets no answer: the check is abandoned, so the
    /// server exits within RunningServer's 15 s instead of waiting out the 60 s timeout.
    @Test func stoppingTheServerAbandonsAConnectionAttemptInProgress() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        try Self.addBulkCustomer(cli, hosts: 1)
        let listener = try ConnectionCountingListener(hold: 0, accepting: false)
        defer { listener.stop() }
        let server = try Self.serverMonitoring(cli, at: listener, timeoutSeconds: 60, concurrency: 1)
        // The first pass starts as soon as the server listens; give it time to send its SYN.
        usleep(1_000_000)
        #expect(try Self.monitoring(server, in: cli.directory)["passes"] as? Int == 0)
        #expect(server.stop() == 0, "\(server.process.stderr)")
    }

    /// A CA file the monitor cannot read would make every host unreachable: the server refuses to start and
    /// says which setting and which file.
    @Test func anUnreadableCAFileStopsTheServerAtStart() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let missing = cli.directory.file("no-such-ca.pem")
        let error = #expect(throws: Failure.self) {
            try RunningServer(cli: cli, extraConfiguration: ["monitoring": ["caFile": missing]])
        }
        #expect(error?.description.contains("'caFile'") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains(missing) == true, "\(error?.description ?? "")")
    }

    /// A peer that accepts the connection and then sends nothing is reported unreachable once the timeout has
    /// passed, not when the peer finally gives up (20 s later).
    @Test func aPeerThatSendsNothingTimesOut() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        try Self.addBulkCustomer(cli, hosts: 1)
        let listener = try ConnectionCountingListener(hold: 20)
        defer { listener.stop() }
        let check = try cli.run(["check", "bulk", "--timeout", "1", "--connect-to", "127.0.0.1:\(listener.port)"])
        #expect(check.status != 0)
        #expect(check.stdoutText.contains("unreachable"), "\(check.stdoutText)")
        #expect(check.stdoutText.contains("did not complete a TLS handshake within 1.0 s"), "\(check.stdoutText)")
    }

    /// A monitor that cannot read its hosts never completes a pass: `pinset status` still shows why, read from
    /// a /status document served by a plain loopback HTTP server.
    @Test func statusPrintsTheMonitoringErrorBeforeAnyPassCompleted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let served = directory.file("served")
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        _ = try directory.write("served/status", """
            {"ready": true, "customers": 1, "consecutiveSigningFailures": 0, "warnings": [],
             "monitoring": {"enabled": true, "passes": 0, "counts": {}, "hosts": [], "lastError": "database disk image is malformed"}}
            """)
        let port = try FreePort.pick()
        let http = try BackgroundProcess("python3", ["-m", "http.server", "--bind", "127.0.0.1", "--directory", served, "\(port)"],
                                         logDirectory: directory.path, name: "http-server")
        defer { http.stop() }
        #expect(FreePort.waitUntilListening(port: port))
        let printed = try ProcessRunner.run(PinsetCLI.binary, ["status", "--url", "http://127.0.0.1:\(port)"], timeout: 30)
        #expect(printed.stdoutText.contains("monitoring error:     database disk image is malformed"), "\(printed.stdoutText)")
        #expect(printed.stdoutText.contains("first pass not finished yet"), "\(printed.stdoutText)")
    }

    @Test func aHostMovedToAnUnpinnedKeyFailsWithinOneIntervalAndRecovers() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let pki = try CLIConnectToTests.serverPKI(in: cli.directory)
        // Another key for the same name, from the same CA: valid for the name, but not pinned.
        let (otherCert, otherKey) = try CLIConnectToTests.renewedCertificate(in: cli.directory)
        let port = try FreePort.pick()
        func serve(cert: String, key: String) throws -> BackgroundProcess {
            let server = try BackgroundProcess("openssl", [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-www", "-quiet",
            ], logDirectory: cli.directory.path, name: "s_server-\(UUID().uuidString.prefix(6))")
            #expect(FreePort.waitUntilListening(port: port))
            return server
        }
        var sServer = try serve(cert: pki.named.cert, key: pki.named.key)
        defer { sServer.stop() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.test", "--port", "\(port)"]).status == 0)
        let pinned = try cli.run(["pin", "add", "acme", "api.example.test", "--from-host", "api.example.test:\(port)", "--hash", LiveChainGuardTests.spareHash,
                                  "--connect-to", "127.0.0.1", "--ca-file", pki.ca])
        #expect(pinned.status == 0, "\(pinned.combined)")

        // The test certificates are valid for 30 days: inside the default 30-day warning window they would read as
        // expiring without a next key, which is not what this test watches.
        let server = try RunningServer(cli: cli, extraConfiguration: [
            "monitoring": ["intervalSeconds": 3, "timeoutSeconds": 2.5, "concurrency": 2, "caFile": pki.ca, "expiryWarningDays": 7,
                           "connectTo": ["api.example.test": "127.0.0.1"]],
        ])
        defer { server.stop() }
        let check = ["check", "acme", "--ca-file", pki.ca, "--connect-to", "api.example.test=127.0.0.1"]

        let healthy = try Self.waitForMonitoring(server, in: cli.directory) { ($0["passes"] as? Int ?? 0) >= 1 }
        #expect(Self.counts(healthy)["matches"] == 1, "\(healthy)")
        #expect((healthy["hosts"] as? [Any])?.isEmpty == true, "\(healthy)")
        #expect(try Self.monitoredHostsMetric(server, state: "matches", in: cli.directory) == 1)
        #expect(try cli.run(check).status == 0)

        sServer.stop()
        sServer = try serve(cert: otherCert, key: otherKey)
        let passesBefore = try Self.monitoring(server, in: cli.directory)["passes"] as? Int ?? 0
        let failing = try Self.waitForMonitoring(server, in: cli.directory) { Self.counts($0)["matches-nothing"] == 1 }
        #expect(Self.counts(failing)["matches-nothing"] == 1, "\(failing)")
        // Within one interval: at most the pass running at the swap and the next one.
        #expect((failing["passes"] as? Int ?? 0) <= passesBefore + 2, "\(failing)")
        let host = try #require((failing["hosts"] as? [[String: Any]])?.first)
        #expect(host["hostname"] as? String == "api.example.test")
        #expect(host["state"] as? String == "matches-nothing")
        #expect(host["failing"] as? Bool == true)
        #expect((host["detail"] as? String)?.contains(try CLIPinSourceTests.opensslPin(certificate: otherCert)) == true, "\(host)")
        #expect(try Self.monitoredHostsMetric(server, state: "matches-nothing", in: cli.directory) == 1)
        #expect(try Self.monitoredHostsMetric(server, state: "matches", in: cli.directory) == 0)
        let failingCheck = try cli.run(check)
        #expect(failingCheck.status != 0)
        #expect(failingCheck.stdoutText.contains("matches-nothing"), "\(failingCheck.stdoutText)")
        let printed = try ProcessRunner.run(PinsetCLI.binary, ["status", "--url", server.baseURL])
        #expect(printed.stdoutText.contains("HOST FAILING:"), "\(printed.stdoutText)")
        #expect(printed.stdoutText.contains("acme api.example.test:\(port) matches-nothing"), "\(printed.stdoutText)")

        sServer.stop()
        sServer = try serve(cert: pki.named.cert, key: pki.named.key)
        let recovered = try Self.waitForMonitoring(server, in: cli.directory) { Self.counts($0)["matches"] == 1 }
        #expect(Self.counts(recovered)["matches"] == 1, "\(recovered)")
        #expect((recovered["hosts"] as? [Any])?.isEmpty == true, "\(recovered)")
        #expect(try Self.monitoredHostsMetric(server, state: "matches-nothing", in: cli.directory) == 0)
        #expect(try cli.run(check).status == 0)

        // One log line per change, not one per pass: each line starts from the state the previous one ended in.
        // (A pass during a swap may also see the port closed, which is a change of its own.)
        func field(_ name: String, _ line: Substring) -> String? {
            line.split(separator: " ").first { $0.hasPrefix("\(name)=") }.map { String($0.dropFirst(name.count + 1)) }
        }
        let changes = server.process.stdout.split(separator: "\n").filter { $0.contains("Monitored host changed state") }
            .map { (from: field("from", $0), to: field("to", $0)) }
        #expect(changes.contains { $0.to == "matches-nothing" }, "\(changes)")
        #expect(changes.last?.to == "matches", "\(changes)")
        #expect(changes.first?.from == "matches", "\(changes)")
        #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.to == $1.from && $1.from != $1.to }, "\(changes)")
    }

    /// 1,000 pinned hosts, all reached at one loopback listener that holds each connection briefly and never
    /// speaks TLS: the monitor holds at most `concurrency` connections at once, and every bundle request during
    /// the pass is answered 200. (How long bundle requests take meanwhile is measured in Benchmarks/.)
    @Test func aThousandHostsAreCheckedWithBoundedConnectionsWhileBundlesAreServed() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let hostCount = 1_000, concurrency = 4
        try Self.addBulkCustomer(cli, hosts: hostCount)

        let listener = try ConnectionCountingListener(hold: 0.02)
        defer { listener.stop() }
        let server = try Self.serverMonitoring(cli, at: listener, timeoutSeconds: 5, concurrency: concurrency)
        defer { server.stop() }

        var statuses: [Int: Int] = [:]
        var monitoring: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(240)
        while Date() < deadline {
            statuses[try CurlResponse.get("\(server.baseURL)/bulk.json.signed", in: cli.directory).status, default: 0] += 1
            monitoring = try Self.monitoring(server, in: cli.directory)
            if (monitoring["passes"] as? Int ?? 0) >= 1 { break }
            // Paced: each round starts two curl processes, which would otherwise take the processor from the pass.
            usleep(250_000)
        }
        #expect((monitoring["passes"] as? Int ?? 0) == 1, "\(monitoring["passes"] ?? "-")")
        #expect(Self.counts(monitoring)["unreachable"] == hostCount, "\(Self.counts(monitoring))")
        #expect(listener.accepted >= hostCount, "\(listener.accepted)")
        #expect(listener.peak >= 1 && listener.peak <= concurrency, "at most \(concurrency) connections at once, saw \(listener.peak)")
        #expect(statuses.keys.sorted() == [200], "\(statuses)")
        #expect((statuses[200] ?? 0) >= 2, "bundles were requested during the pass: \(statuses)")
        #expect(try Self.monitoredHostsMetric(server, state: "unreachable", in: cli.directory) == Double(hostCount))
    }
}
