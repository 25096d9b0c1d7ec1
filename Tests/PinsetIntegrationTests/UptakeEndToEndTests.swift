import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// Uptake through the real parts: the client library reports the version it holds, `pinset serve` counts the
/// fetches, and `/status` and `pinset status` show the split between the old and the new version.
@Suite(.serialized) struct UptakeEndToEndTests {
    @Test func statusShowsWhichVersionsClientsHold() async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        _ = try cli.addAcmePinnedToLeafAndBackup()
        let backupHash = PinsetCLI.backupPin
        let server = try RunningServer(cli: cli)
        defer { server.stop() }

        let state = try TemporaryDirectory(prefix: "pinset-client-state")
        defer { state.remove() }
        let configuration = try cli.acmeClientConfiguration(server: server, stateDirectory: state)
        // First launch: no verified pins yet, so no version to report.
        let old = try await PinsetUpdater(configuration: configuration).update()

        #expect(try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", backupHash]).status == 0)
        // A new process with the stored pins (version N-1) fetches until the server serves version N.
        let updater = PinsetUpdater(configuration: configuration)
        var olderFetches = 0
        var new = old
        while new.version == old.version && olderFetches < 300 {
            if olderFetches > 0 { try await Task.sleep(for: .milliseconds(100)) }
            new = try await updater.update()
            olderFetches += 1
        }
        #expect(new.version > old.version)
        // Now on version N: one fetch reporting it.
        _ = try await updater.update()

        let bundleURL = "\(server.baseURL)/acme.json.signed"
        // A conditional fetch that is answered 304 counts too.
        let full = try CurlResponse.get(bundleURL, in: cli.directory)
        let etag = try #require(full.headers["etag"])
        let conditional = try CurlResponse.get(bundleURL, ["-H", "If-None-Match: \(etag)", "-H", "Pinset-Version: \(new.version)"], in: cli.directory)
        #expect(conditional.status == 304)
        // A malformed version is served as usual and counted as unknown.
        let malformed = try CurlResponse.get(bundleURL, ["-H", "Pinset-Version: \(new.version)abc"], in: cli.directory)
        #expect(malformed.status == 200)
        #expect(malformed.body.count > 0)

        // Unknown: the first-launch fetch, the plain curl and the malformed header.
        let unknown = 3
        let reported = olderFetches + 2
        let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])
        let uptake = try #require(report["uptake"] as? [String: Any])
        #expect(uptake["windowSeconds"] as? Int == 3600)
        let acme = try #require((uptake["customers"] as? [String: Any])?["acme"] as? [String: Any])
        #expect(acme["fetches"] as? Int == reported + unknown)
        #expect(acme["unknownVersionFetches"] as? Int == unknown)
        #expect(acme["fetchesReportingVersion"] as? Int == reported)
        #expect(acme["fetchesOnLatest"] as? Int == 2)
        #expect(acme["latestVersion"] as? Int == Int(new.version))
        #expect(acme["oldestVersionSeen"] as? Int == Int(old.version))
        #expect(acme["fetchesByVersion"] as? [String: Int] == [String(old.version): olderFetches, String(new.version): 2])

        let printed = try cli.run(["status", "--url", server.baseURL])
        #expect(printed.status == 0)
        let share = Int((2.0 / Double(reported) * 100).rounded())
        #expect(printed.stdoutText.contains("uptake (last 60 min, fetches served by this instance):"))
        #expect(printed.stdoutText.contains(
            "  acme: \(reported + unknown) fetches; on latest (v\(new.version)): \(share)% (2 of \(reported) reporting a version); oldest seen: v\(old.version); unknown version: \(unknown)"
        ), "\(printed.stdoutText)")
    }
}
