import Foundation
import PinsetTestSupport
import Testing

/// Server settings that are valid for Pinset clients but break legacy GCX clients are reported at start and
/// in `/status`.
@Suite(.serialized) struct LegacyClientSettingsTests {
    static func warnings(_ server: RunningServer, in directory: TemporaryDirectory) throws -> [String] {
        let status = try CurlResponse.get("\(server.baseURL)/status", in: directory)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])
        return try #require(object["warnings"] as? [String])
    }

    @Test func settingsThatBreakLegacyClientsAreWarnedAbout() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["freshnessWindowSeconds": 900, "resignIntervalSeconds": 700])
        defer { server.stop() }
        let warnings = try Self.warnings(server, in: cli.directory)
        #expect(warnings.count == 2, "\(warnings)")
        #expect(warnings.contains { $0.contains("'freshnessWindowSeconds' is 900") })
        #expect(warnings.contains { $0.contains("'resignIntervalSeconds' is 700") && $0.contains("age past the 600 s") })
        #expect(server.process.stdout.contains("'freshnessWindowSeconds' is 900"), "\(server.process.stdout)")
        let status = try ProcessRunner.run(PinsetCLI.binary, ["status", "--url", server.baseURL])
        #expect(status.stdoutText.contains("warning:"), "\(status.combined)")
    }

    @Test func defaultSettingsCarryNoWarning() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        #expect(try Self.warnings(server, in: cli.directory).isEmpty)
    }

    @Test func aResignIntervalLeavingLittleLegacyFreshnessIsWarnedAbout() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["resignIntervalSeconds": 500])
        defer { server.stop() }
        let warnings = try Self.warnings(server, in: cli.directory)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("only 100 s left") == true, "\(warnings)")
    }

    /// A signing certificate close to expiry is reported too: apps reject every bundle once it expires.
    @Test func aSigningCertificateCloseToExpiryIsWarnedAbout() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        #expect(try cli.run(["init", "--validity-days", "30"]).status == 0)
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let warnings = try Self.warnings(server, in: cli.directory)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("expires on") == true, "\(warnings)")
        let signed = try cli.run(["sign", "--out", cli.directory.file("out")])
        #expect(signed.status == 0 && signed.stderr.contains("The signing certificate"), "\(signed.combined)")
    }
}
