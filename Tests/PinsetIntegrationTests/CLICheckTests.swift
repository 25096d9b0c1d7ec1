import Foundation
import PinsetTestSupport
import Testing

/// `pinset check`: every host against the chain it serves, once, with an exit status for cron and CI.
@Suite(.serialized) struct CLICheckTests {
    @Test func aHostWhoseServerMovedToAnUnpinnedKeyFailsTheCheck() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let pinned = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "pinned")
        let unpinned = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "unpinned")
        let roots = try cli.directory.write("roots.pem", try String(contentsOfFile: pinned.cert, encoding: .utf8) + String(contentsOfFile: unpinned.cert, encoding: .utf8))
        let port = try FreePort.pick()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "localhost", "--port", "\(port)"]).status == 0)
        let pin = try CLIPinSourceTests.opensslPin(certificate: pinned.cert)
        #expect(try cli.run(["pin", "add", "acme", "localhost", "--hash", pin, "--skip-live-check", "--reason", "server not started yet"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "internal.example.test"]).status == 0)
        #expect(try cli.run(["host", "update", "acme", "internal.example.test", "--unmonitored", "office network only"]).status == 0)

        func serve(_ certificate: (key: String, cert: String)) throws -> BackgroundProcess {
            try CLIPinSourceTests.serveTLS(certificate, port: port, logDirectory: cli.directory.path)
        }

        // Nothing listening yet: unreachable, a failure.
        let down = try cli.run(["check", "acme", "--ca-file", roots])
        #expect(down.status != 0)
        #expect(down.stdoutText.contains("unreachable"), "\(down.stdoutText)")

        let good = try serve(pinned)
        // The 30-day leaf's key is the only match: a renewal with a new key would lock apps out.
        let expiring = try cli.run(["check", "acme", "--ca-file", roots, "--json"])
        let passing = try cli.run(["check", "acme", "--ca-file", roots, "--json", "--expiry-days", "7"])
        good.stop()
        #expect(expiring.status == 0, "\(expiring.combined)")
        let expiringRows = try #require(try JSONSerialization.jsonObject(with: Data(expiring.stdout)) as? [[String: Any]])
        #expect(expiringRows.first { $0["hostname"] as? String == "localhost" }?["state"] as? String == "sole-key-expiring", "\(expiring.stdoutText)")
        #expect(passing.status == 0, "\(passing.combined)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(passing.stdout)) as? [[String: Any]])
        #expect(rows.count == 2)
        let localhost = try #require(rows.first { $0["hostname"] as? String == "localhost" })
        #expect(localhost["state"] as? String == "matches")
        #expect((localhost["warnings"] as? [String])?.contains { $0.contains("none is a backup") } == true)
        let office = try #require(rows.first { $0["hostname"] as? String == "internal.example.test" })
        #expect(office["state"] as? String == "unmonitored")
        #expect(office["detail"] as? String == "office network only")

        let swapped = try serve(unpinned)
        defer { swapped.stop() }
        let failing = try cli.run(["check", "--ca-file", roots])
        #expect(failing.status != 0)
        #expect(failing.stdoutText.contains("matches-nothing"), "\(failing.stdoutText)")
        #expect(failing.stdoutText.contains(try CLIPinSourceTests.opensslPin(certificate: unpinned.cert)), "\(failing.stdoutText)")
    }
}
