#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetCore
import PinsetTestSupport
import PinsetTransparency
import Testing

extension SeveralHostsTests {
    /// Two `pinset serve` instances on one PostgreSQL database, each with its own copy of the log key, publish one
    /// transparency log: edits go through the first instance's admin API; an app requiring the log (`pinset client
    /// update --log-key`, one state directory) switches between the instances, so each checkpoint it takes from one
    /// instance must extend, by a consistency proof from that instance's tiles, the one it took from the other; and
    /// at rest both serve the very same checkpoint.
    @Test func twoInstancesOnOneDatabasePublishOneLogThatDoesNotFork() async throws {
        let deployment = try Deployment(instances: 2)
        defer { deployment.remove() }
        let cli = deployment.cli
        let origin = TransparencyEndToEndTests.origin
        let generated = try cli.run(["transparency", "key", "generate", "--origin", origin])
        #expect(generated.status == 0, "\(generated.combined)")
        let vkey = try #require(generated.stdoutText.split(separator: "\n").last.map(String.init))
        for directory in deployment.instanceDirectories {
            try FileManager.default.copyItem(atPath: "\(cli.dataDir)/log.key", toPath: "\(directory)/log.key")
            #expect(chmod("\(directory)/log.key", 0o600) == 0)
        }
        for command in [
            ["host", "update", "acme", "api.example.com", "--unmonitored", "example host, not reachable from tests"],
            ["admin", "add", "alice", "--role", "editor:acme"],
        ] {
            let result = try cli.run(command)
            #expect(result.status == 0, "pinset \(command.joined(separator: " ")): \(result.combined)")
        }
        let token = try cli.run(["admin", "token", "alice", "--label", "two-instances"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let apiPort = try FreePort.pick()
        let log: [String: Any] = ["transparencyLog": ["origin": origin]]
        let servers = [
            try deployment.start(0, extraConfiguration: log.merging(["api": ["host": "127.0.0.1", "port": apiPort]]) { old, _ in old }),
            try deployment.start(1, extraConfiguration: log),
        ]
        defer { for server in servers { server.stop() } }
        let policy = try TransparencyPolicy(origin: origin, logKeys: [NoteVerifierKey(parsing: vkey).makeVerifier()])

        let state = cli.directory.file("app-state")
        /// `pinset client update` from `server` with the app's one state: the version it installed and the size of
        /// the checkpoint it verified the proof under.
        func update(from server: RunningServer) throws -> (version: Int64, treeSize: Int) {
            let result = try cli.run(["client", "update", "--server", server.baseURL, "--customer", "acme", "--trust", cli.trustCertificate,
                                      "--state-dir", state, "--log-key", vkey, "--json"])
            #expect(result.status == 0, "from \(server.baseURL): \(result.combined)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any], "\(result.combined)")
            let proof = try #require(document["transparency"] as? [String: Any], "\(result.stdoutText)")
            return (try #require(document["version"] as? Int64), try #require(proof["treeSize"] as? Int))
        }
        var edits = 0
        /// One edit through the first instance's admin API; returns once both instances serve its version.
        func edit() async throws {
            edits += 1
            let before = try await deployment.served(by: servers[0].baseURL).version
            let body = cli.directory.file("edit-\(edits).json")
            try Data("{\"hashes\": [\"\(Base64.encode([UInt8](repeating: UInt8(edits), count: 32)))\"], \"reason\": \"rotation \(edits)\"}".utf8)
                .write(to: URL(fileURLWithPath: body))
            let response = try CurlResponse.get(
                "http://127.0.0.1:\(apiPort)/api/v1/customers/acme/hosts/api.example.com/pins",
                ["-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json", "--data-binary", "@\(body)"],
                in: cli.directory)
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            _ = try await waitUntilAllServe(above: before, deployment, servers)
        }

        let first = try update(from: servers[0])
        // The same content from the other instance: a checkpoint of the same size must have the same root.
        let same = try update(from: servers[1])
        #expect(same.version == first.version)
        #expect(same.treeSize >= first.treeSize)

        // Edited through the first instance, fetched from the second: its checkpoint extends the first's.
        try await edit()
        let second = try update(from: servers[1])
        #expect(second.version > first.version)
        #expect(second.treeSize > same.treeSize)
        // And back: the first instance's next checkpoint extends the one the app took from the second.
        try await edit()
        let third = try update(from: servers[0])
        #expect(third.version > second.version)
        #expect(third.treeSize > second.treeSize)

        // At rest, both serve the same checkpoint under the log's key. (Byte for byte where Ed25519 signs
        // deterministically, as swift-crypto's BoringSSL does on Linux; CryptoKit on Apple platforms randomizes its
        // signatures, so there the signed text is what is the same.)
        var checkpoints: [[UInt8]] = []
        for server in servers {
            let response = try CurlResponse.get("\(server.baseURL)/log/checkpoint", in: cli.directory)
            #expect(response.status == 200)
            let verified = try policy.verify(checkpoint: SignedNote(parsing: String(decoding: response.body, as: UTF8.self)))
            #expect(verified.checkpoint.treeSize == UInt64(third.treeSize), "\(server.baseURL) serves \(verified.checkpoint.treeSize) entries")
            checkpoints.append(response.body)
        }
        let texts = try checkpoints.map { try SignedNote(parsing: $0).text }
        #expect(texts[0] == texts[1])
        #if !canImport(Darwin)
        #expect(checkpoints[0] == checkpoints[1])
        #endif
        for server in servers { #expect(server.stop() == 0, "SIGTERM must exit 0: \(server.process.stderr)") }
    }
}
