#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset transparency monitor` following the real server's log across an edit: the first run lists acme's
/// entries, the runs after the edit exactly the one entry it appended.
@Suite(.serialized) struct TransparencyMonitorEndToEndTests {
    static let origin = "127.0.0.1/log"

    @Test func theMonitorListsACustomersEntriesThenOnlyTheOneAnEditAppends() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let generated = try cli.run(["transparency", "key", "generate", "--origin", Self.origin])
        #expect(generated.status == 0, "\(generated.combined)")
        let vkey = try #require(generated.stdoutText.split(separator: "\n").last.map(String.init))
        let server = try RunningServer(cli: cli, extraConfiguration: ["transparencyLog": ["origin": Self.origin]])
        defer { server.stop() }
        let state = cli.directory.file("monitor-state.json")
        func monitor() throws -> [String: Any] {
            let output = try cli.run(["transparency", "monitor", "--log-url", "\(server.baseURL)/log/", "--log-key", vkey,
                                      "--state", state, "--customer", "acme", "--json"])
            #expect(output.status == 0, "\(output.combined)")
            return try #require(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.combined)")
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
        #expect(try entries(try monitor()).isEmpty, "a run after that finds nothing new")
    }
}
