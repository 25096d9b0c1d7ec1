import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// The client library's pin-failure reports end to end: a real `PinsetUpdater` evaluates the chain a loopback
/// `openssl s_server` presents with a key no pin holds, its report reaches the reports listener of a real
/// `pinset serve`, and `pinset reports` shows it. With reporting off, the listener sees nothing.
@Suite(.serialized) struct ClientFailureReportTests {
    @Test func aPinMismatchIsReportedAndShownByPinsetReports() async throws {
        let setup = try ReportsListenerTests.Setup()
        defer { setup.stop() }
        let cli = setup.cli

        // The server the app connects to: a CA-issued certificate for api.example.com whose key is not pinned.
        let ca = try TestPKI.certificateAuthority()
        let leaf = try TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: ca)
        let certPath = try cli.directory.write("served.pem", leaf.certificatePEM)
        let keyPath = try cli.directory.write("served.key", leaf.privateKeyPEM, mode: 0o600)
        let tlsPort = try FreePort.pick()
        let tlsServer = try BackgroundProcess("openssl", ["s_server", "-accept", "127.0.0.1:\(tlsPort)", "-cert", certPath, "-key", keyPath, "-www", "-quiet"],
                                              logDirectory: cli.directory.path, name: "s_server")
        defer { tlsServer.stop(signal: SIGTERM) }
        #expect(FreePort.waitUntilListening(port: tlsPort))
        let presented = try Self.presentedChain(port: tlsPort)
        #expect(presented.count == 1)
        let trust = ServerTrustEvaluator(pins: PinEvaluator(), trustRoots: try TLSTrustRoots(certificateFiles: [Array(ca.certificatePEM.utf8)]))

        // Reporting off (the default): the mismatch is refused and nothing is sent.
        let quietState = try TemporaryDirectory(prefix: "pinset-client-quiet")
        defer { quietState.remove() }
        let quiet = PinsetUpdater(configuration: try cli.acmeClientConfiguration(server: setup.server, stateDirectory: quietState))
        let held = try await quiet.update()
        #expect(quiet.failureReporter == nil)
        #expect(try await Self.evaluate(presented, with: quiet, trust: trust) == .pinMismatch)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try Self.reportsReceived(setup) == 0)
        #expect(!FileManager.default.fileExists(atPath: quietState.file("acme.pinset-reports")))

        // Reporting on: the same mismatch is reported once, over a connection that does not use the pins.
        let state = try TemporaryDirectory(prefix: "pinset-client-reporting")
        defer { state.remove() }
        var configuration = try cli.acmeClientConfiguration(server: setup.server, stateDirectory: state)
        configuration.failureReports = try PinFailureReportConfiguration(
            reportURL: try #require(URL(string: "http://127.0.0.1:\(setup.reportsPort)/report/acme")), appBundleID: "com.example.app", appVersion: "5.0.1"
        )
        let updater = PinsetUpdater(configuration: configuration)
        _ = try await updater.update()
        #expect(try await Self.evaluate(presented, with: updater, trust: trust) == .pinMismatch)
        #expect(try await Self.evaluate(presented, with: updater, trust: trust) == .pinMismatch)

        let rows = try await setup.reportRows { rows in !rows.isEmpty }
        let pendingNow = await updater.failureReporter?.pendingCount
        let receivedNow = try Self.reportsReceived(setup)
        #expect(rows.count == 1, "pending \(String(describing: pendingNow)); received \(receivedNow); \(setup.server.process.stdout.suffix(3000))")
        let row = try #require(rows.first)
        #expect(row["hostname"] as? String == "api.example.com")
        #expect(row["reports"] as? Int == 1, "one report per host per hour")
        #expect(row["servedLeafSPKISHA256"] as? String == leaf.spkiSHA256.base64)
        #expect(row["servedKeyPinned"] as? Bool == false)
        #expect(row["appVersions"] as? [String] == ["5.0.1"])
        #expect(row["pinsetVersions"] as? [Int] == [Int(held.version)])
        // The reporter forgets the report once the server's answer reaches it, which can come a moment after the
        // row is stored; the bound is generous because the reporter's task waits its turn on a busy machine.
        var pending = await updater.failureReporter?.pendingCount
        let deadline = ContinuousClock.now + .seconds(60)
        while pending != 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            pending = await updater.failureReporter?.pendingCount
        }
        #expect(pending == 0)
        let table = try cli.run(["reports", "--data-dir", cli.dataDir])
        #expect(table.stdoutText.contains("v\(held.version)"), "\(table.stdoutText)")
    }

    enum Verdict: Equatable { case trusted, pinMismatch, other(String) }

    static func evaluate(_ chain: [[UInt8]], with updater: PinsetUpdater, trust: ServerTrustEvaluator) async throws -> Verdict {
        let pinned = ServerTrustEvaluator(pins: updater.evaluator, trustRoots: trust.trustRoots)
        switch await pinned.evaluate(serverHostname: "api.example.com", presentedChain: chain) {
        case .success: return .trusted
        case .failure(let error): return error.code == .pinMismatch ? .pinMismatch : .other("\(error)")
        }
    }

    /// The certificates `openssl s_client` was presented, DER, leaf first.
    static func presentedChain(port: Int) throws -> [[UInt8]] {
        let result = try ProcessRunner.run("openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "api.example.com", "-showcerts"], stdin: [])
        let certificates = try PinMaterial.certificates(fromFileContents: result.stdout, origin: "s_client output")
        return try certificates.map { try PinMaterial.derBytes(of: $0) }
    }

    /// The sum of `pinset_reports_received_total` over every outcome.
    static func reportsReceived(_ setup: ReportsListenerTests.Setup) throws -> Int {
        let metrics = try CurlResponse.get("\(setup.server.baseURL)/metrics", in: setup.cli.directory)
        return String(decoding: metrics.body, as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("pinset_reports_received_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0) { $0 + Int($1) }
    }
}
