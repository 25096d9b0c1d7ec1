#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetCore
import PinsetTestSupport
import Testing

/// `pinset transparency monitor` following the real server's log across an edit: the first run lists acme's
/// entries, the runs after the edit exactly the one entry it appended; comparing the served bundle with the log, it
/// reports the pin the edit added, and a bundle signed with the leaked key for a logged version as an alert.
@Suite(.serialized) struct TransparencyMonitorEndToEndTests {
    static let origin = "127.0.0.1/log"

    @Test func theMonitorListsACustomersEntriesThenOnlyTheOneAnEditAppends() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let vkey = try cli.generateLogKey(origin: Self.origin)
        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": ["origin": Self.origin]])
        defer { server.stop() }
        let state = cli.directory.file("monitor-state.json")
        func monitor(bundles: String? = nil, expectedStatus: Int32 = 0) throws -> [String: Any] {
            let output = try cli.run(["transparency", "monitor", "--log-url", "\(server.baseURL)/log/", "--log-key", vkey,
                                      "--state", state, "--customer", "acme", "--json",
                                      "--bundle-url", bundles ?? server.baseURL, "--trust", cli.trustCertificate])
            #expect(output.status == expectedStatus, "\(output.combined)")
            return try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.combined)")
        }
        func comparison(_ document: [String: Any]) throws -> [String: Any] {
            let pinSets = try #require(document["pinSets"] as? [[String: Any]], "\(document)")
            #expect(pinSets.count == 1 && pinSets.first?["customer"] as? String == "acme", "\(pinSets)")
            return try #require(pinSets.first)
        }
        func entries(_ document: [String: Any]) throws -> [[String: Any]] {
            try #require(document["entries"] as? [[String: Any]], "\(document)")
        }

        let first = try monitor()
        #expect(first["previousTreeSize"] is NSNull)
        let firstEntries = try entries(first)
        #expect(!firstEntries.isEmpty)
        #expect(firstEntries.allSatisfy { $0["customer"] as? String == "acme" }, "\(firstEntries)")
        let firstLatest = try #require((first["latestVersions"] as? [String: Any])?["acme"] as? Int64, "\(first)")
        #expect(firstEntries.compactMap { $0["version"] as? Int64 }.max() == firstLatest)
        // The served bundle is the logged content; the first comparison lists every host as added.
        let firstComparison = try comparison(first)
        #expect(firstComparison["outcome"] as? String == "compared" && firstComparison["servedVersion"] as? Int64 == firstLatest, "\(firstComparison)")
        #expect(firstComparison["firstComparison"] as? Bool == true)
        let baseline = try #require(firstComparison["changes"] as? [[String: Any]])
        #expect(!baseline.isEmpty && baseline.allSatisfy { $0["change"] as? String == "added" }, "\(baseline)")
        let apiBefore = try #require(baseline.first { $0["host"] as? String == "api.example.com:8443" }, "\(baseline)")
        #expect((apiBefore["addedPins"] as? [String])?.contains("pin-sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=") == false)

        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        // The server logs the edit within a change poll and a pass; each run meanwhile may find nothing new.
        var newEntries: [[String: Any]] = []
        var last = first
        for _ in 0..<100 where newEntries.isEmpty {
            usleep(100_000)
            last = try monitor()
            newEntries += try entries(last)
        }
        #expect(newEntries.count == 1, "\(newEntries)")
        let added = try #require(newEntries.first)
        #expect(added["customer"] as? String == "acme")
        let addedVersion = try #require(added["version"] as? Int64)
        #expect(addedVersion > firstLatest)
        let firstSize = try #require(first["treeSize"] as? Int)
        #expect(try #require(added["index"] as? Int) >= firstSize, "an entry appended after the first run: \(added)")
        #expect((last["latestVersions"] as? [String: Any])?["acme"] as? Int64 == addedVersion)
        // Once the server serves the new content (at most a pass after it is logged), the comparison names the pin.
        var compared = try comparison(last)
        for _ in 0..<100 where compared["servedVersion"] as? Int64 != addedVersion {
            usleep(100_000)
            compared = try comparison(try monitor())
        }
        #expect(compared["outcome"] as? String == "compared" && compared["firstComparison"] as? Bool == false, "\(compared)")
        let changes = try #require(compared["changes"] as? [[String: Any]], "\(compared)")
        #expect(changes.count == 1, "only the edited host: \(changes)")
        #expect(changes.first?["host"] as? String == "api.example.com:8443" && changes.first?["change"] as? String == "changed")
        #expect(changes.first?["addedPins"] as? [String] == ["pin-sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], "\(changes)")
        #expect(changes.first?["removedPins"] as? [String] == [], "\(changes)")
        let quiet = try monitor()
        #expect(try entries(quiet).isEmpty, "a run after that finds nothing new")
        #expect((try comparison(quiet)["changes"] as? [[String: Any]])?.isEmpty == true, "and no pin changed")

        // The attacker holding the signer key serves its own pins as the logged version: signed, but not what the
        // log holds for that version. Then as a version the log never saw.
        let attacker = try LeakedSignerRecoveryTests.Attacker.start(leakingFrom: cli)
        defer {
            attacker.server.stop()
            attacker.directory.remove()
        }
        let forgedPin = Base64.encode([UInt8](repeating: 9, count: 32))
        try attacker.serve(version: addedVersion, lifetime: 3600, pin: forgedPin, tool: OfflineRootTests())
        let forged = try comparison(try monitor(bundles: attacker.url, expectedStatus: 17))
        #expect(forged["outcome"] as? String == "served-content-not-logged" && forged["servedVersion"] as? Int64 == addedVersion, "\(forged)")
        #expect(forged["servedContentSHA256"] as? String != forged["loggedContentSHA256"] as? String)
        try attacker.serve(version: addedVersion + 1, lifetime: 3600, pin: forgedPin, tool: OfflineRootTests())
        let unlogged = try comparison(try monitor(bundles: attacker.url))
        #expect(unlogged["outcome"] as? String == "served-other-version" && unlogged["loggedVersion"] as? Int64 == addedVersion, "\(unlogged)")
        // Neither changed what the next comparison with the real server is measured against.
        #expect((try comparison(try monitor())["changes"] as? [[String: Any]])?.isEmpty == true)
    }
}
