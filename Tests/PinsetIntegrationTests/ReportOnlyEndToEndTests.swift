import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// A host's report-only window end to end: `pinset host report-only` on the data directory of a running
/// `pinset serve`, the bundle it serves, `/status`, the metrics and `pinset status` showing it, `pinset client`
/// showing the mode, the client library letting a connection whose chain matches no pin through after normal TLS
/// validation with the mismatch reported to the server's reports listener, then enforcing once the device clock
/// passes the window's end and still when the clock is set back; `pinset host enforce` ending it early.
@Suite(.serialized) struct ReportOnlyEndToEndTests {
    @Test func aMismatchIsAllowedAndReportedInTheWindowAndRefusedAfterItAlsoWithTheClockSetBack() async throws {
        let setup = try ReportsListenerTests.Setup()
        defer { setup.stop() }
        let cli = setup.cli

        // The CLI's rules first: a reason is required, and no window longer than 72 hours is set.
        let noReason = try cli.run(["host", "report-only", "acme", "api.example.com", "--until", "2h", "--reason", " "])
        #expect(noReason.status != 0 && noReason.stderr.contains("reason"), "\(noReason.combined)")
        let tooLong = try cli.run(["host", "report-only", "acme", "api.example.com", "--until", "73h", "--reason", "renewal"])
        #expect(tooLong.status != 0 && tooLong.stderr.contains("259200"), "\(tooLong.combined)")
        let set = try cli.run(["host", "report-only", "acme", "api.example.com", "--until", "2h", "--reason", "renewal served an unpinned key"])
        #expect(set.status == 0, "\(set.combined)")

        // What the app connects to: a CA-issued certificate for api.example.com whose key no pin holds.
        let ca = try TestPKI.certificateAuthority()
        let leaf = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: ca)
        let certPath = try cli.directory.write("served.pem", leaf.certificatePEM)
        let keyPath = try cli.directory.write("served.key", leaf.privateKeyPEM, mode: 0o600)
        let tlsPort = try FreePort.pick()
        let tlsServer = try BackgroundProcess("openssl", ["s_server", "-accept", "127.0.0.1:\(tlsPort)", "-cert", certPath, "-key", keyPath, "-www", "-quiet"],
                                              logDirectory: cli.directory.path, name: "s_server")
        defer { tlsServer.stop(signal: SIGTERM) }
        #expect(FreePort.waitUntilListening(port: tlsPort))
        let presented = try ClientFailureReportTests.presentedChain(port: tlsPort)
        let trust = ServerTrustEvaluator(pins: PinEvaluator(), trustRoots: try TLSTrustRoots(certificateFiles: [Array(ca.certificatePEM.utf8)]))

        // The app: the client library on a device clock the test moves, with reports on.
        let state = try TemporaryDirectory(prefix: "pinset-client-report-only")
        defer { state.remove() }
        var configuration = try cli.acmeClientConfiguration(server: setup.server, stateDirectory: state)
        configuration.failureReports = try PinFailureReportConfiguration(
            reportURL: try #require(URL(string: "http://127.0.0.1:\(setup.reportsPort)/report/acme")), appBundleID: "com.example.app", appVersion: "5.0.1"
        )
        let clock = TestClock(Date())
        let updater = PinsetUpdater(configuration: configuration, now: clock.now)
        // The server signs the change within its poll interval; the client fetches until it carries the window.
        var held = try await updater.update()
        for _ in 0..<100 where held.hosts.first?.reportOnlyUntil == nil {
            try await Task.sleep(for: .milliseconds(100))
            held = try await updater.update()
        }
        let until = try #require(held.hosts.first?.reportOnlyUntil, "the served bundle announces no window")
        #expect(until > Int64(clock.now().timeIntervalSince1970) + 7000 && until <= Int64(clock.now().timeIntervalSince1970) + 7200)

        #expect(try await ClientFailureReportTests.evaluate(presented, with: updater, trust: trust) == .trusted)
        let rows = try await setup.reportRows { rows in !rows.isEmpty }
        #expect(rows.first?["hostname"] as? String == "api.example.com", "\(rows)")
        #expect(rows.first?["pinsetVersions"] as? [Int] == [Int(held.version)])
        // Normal validation still decides first: the same chain under a root the device does not trust is refused.
        let untrustedRoot = ServerTrustEvaluator(pins: updater.evaluator, trustRoots: try TLSTrustRoots(certificateFiles: [Array(TestPKI.certificateAuthority().certificatePEM.utf8)]))
        if case .success = await untrustedRoot.evaluate(serverHostname: "api.example.com", presentedChain: presented) {
            Issue.record("a chain to an untrusted root passed in report-only mode")
        }

        // Shown while it lasts: /status, the metrics, `pinset status`, `pinset client`.
        var status: [String: Any] = [:]
        for attempt in 0..<100 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(100)) }
            let response = try CurlResponse.get("\(setup.server.baseURL)/status", in: cli.directory)
            status = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
            if status["reportOnly"] != nil { break }
        }
        let listed = try #require((status["reportOnly"] as? [[String: Any]])?.first, "\(status)")
        #expect(listed["customer"] as? String == "acme" && listed["hostname"] as? String == "api.example.com" && listed["setBy"] as? String == "test-admin")
        #expect((status["warnings"] as? [String])?.contains { $0.contains("REPORT-ONLY") } == true)
        let metrics = String(decoding: try CurlResponse.get("\(setup.server.baseURL)/metrics", in: cli.directory).body, as: UTF8.self)
        let gauge = metrics.split(separator: "\n").first { $0.hasPrefix("pinset_report_only_hosts ") }
        #expect(gauge.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } } == 1, "\(gauge.map(String.init) ?? "no pinset_report_only_hosts")")
        let statusCommand = try cli.run(["status", "--url", setup.server.baseURL])
        #expect(statusCommand.stdoutText.contains("REPORT-ONLY:          api.example.com of 'acme' until"), "\(statusCommand.combined)")
        let clientState = try TemporaryDirectory(prefix: "pinset-cli-client")
        defer { clientState.remove() }
        let shown = try cli.run(["client", "update", "--server", setup.server.baseURL, "--customer", "acme", "--trust", cli.trustCertificate,
                                 "--state-dir", clientState.path, "--json"])
        let hosts = (try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [String: Any])?["hosts"] as? [[String: Any]]
        #expect(hosts?.first?["mode"] as? String == "report-only", "\(shown.combined)")
        #expect(try cli.run(["client", "show", "--state-dir", clientState.path]).stdoutText.contains("REPORT-ONLY until"))
        let audit = try cli.run(["log", "--customer", "acme"])
        #expect(audit.stdoutText.contains("host.report-only") && audit.stdoutText.contains("renewal served an unpinned key"), "\(audit.combined)")

        // The window's end by the device clock: enforcing, and still with the clock set back into the window.
        clock.advance(by: TimeInterval(until - Int64(clock.now().timeIntervalSince1970)))
        #expect(try await ClientFailureReportTests.evaluate(presented, with: updater, trust: trust) == .pinMismatch)
        clock.advance(by: -3600)
        #expect(try await ClientFailureReportTests.evaluate(presented, with: updater, trust: trust) == .pinMismatch)

        // Ended early: the next bundle announces nothing, and the server stops showing it.
        let enforce = try cli.run(["host", "enforce", "acme", "api.example.com", "--reason", "renewal fixed"])
        #expect(enforce.status == 0, "\(enforce.combined)")
        let freshState = try TemporaryDirectory(prefix: "pinset-client-after")
        defer { freshState.remove() }
        let fresh = PinsetUpdater(configuration: try cli.acmeClientConfiguration(server: setup.server, stateDirectory: freshState))
        var after = try await fresh.update()
        for _ in 0..<100 where after.hosts.first?.reportOnlyUntil != nil {
            try await Task.sleep(for: .milliseconds(100))
            after = try await fresh.update()
        }
        #expect(after.hosts.first?.reportOnlyUntil == nil && after.version > held.version)
        var cleared = false
        for attempt in 0..<100 where !cleared {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(100)) }
            let response = try CurlResponse.get("\(setup.server.baseURL)/status", in: cli.directory)
            cleared = (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reportOnly"] == nil
        }
        #expect(cleared)
    }
}
