import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// The companion client against the real server: `pinset` adds pins, `pinset serve` signs and serves, the
/// client fetches over HTTP, verifies against the trust certificate from `pinset init`, and stores the pins.
@Suite(.serialized) struct ClientEndToEndTests {
    @Test func clientFollowsAdminEdits() async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let leaf = try cli.addAcmePinnedToLeafAndBackup()
        let backupHash = PinsetCLI.backupPin
        let server = try RunningServer(cli: cli)
        defer { server.stop() }

        let state = try TemporaryDirectory(prefix: "pinset-client-state")
        defer { state.remove() }
        let configuration = try cli.acmeClientConfiguration(server: server, stateDirectory: state)
        let updater = PinsetUpdater(configuration: configuration)
        let first = try await updater.update()
        #expect(first.hosts.map(\.hostname.rawValue) == ["api.example.com"])
        #expect(first.hosts[0].spkiSHA256.count == 2)
        let leafDER = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try derFile(leaf.cert, in: cli.directory))))
        guard case .pinnedMatch = updater.evaluator.evaluate(host: "api.example.com", chain: [leafDER]) else {
            Issue.record("the served pins must match the leaf: \(updater.evaluator.evaluate(host: "api.example.com", chain: [leafDER]))")
            return
        }

        // The admin rotates: the leaf's pin is removed, the backup stays. The next update must drop the leaf.
        let leafPin = try #require(first.hosts[0].spkiSHA256.map(\.base64).first { $0 != backupHash })
        #expect(try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", leafPin]).status == 0)
        var second = first
        for _ in 0..<300 where second.version == first.version {
            try await Task.sleep(for: .milliseconds(100))
            second = try await updater.update()
        }
        #expect(second.version > first.version)
        #expect(second.hosts[0].spkiSHA256.map(\.base64) == [backupHash])
        guard case .pinMismatch = updater.evaluator.evaluate(host: "api.example.com", chain: [leafDER]) else {
            Issue.record("a removed pin must no longer match: \(updater.evaluator.evaluate(host: "api.example.com", chain: [leafDER]))")
            return
        }

        // A new process starting offline uses the stored pins.
        let offline = PinsetUpdater(configuration: configuration)
        guard case .loaded(let stored) = await offline.loadStoredPins() else {
            Issue.record("the stored pins were not loaded")
            return
        }
        #expect(stored.version == second.version)
    }

    @Test func aBundleFromAnotherTrustServerIsRefused() async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let state = try TemporaryDirectory(prefix: "pinset-client-state")
        defer { state.remove() }
        let otherAnchor = try TestPKI.signingIdentity().certificateDER
        let configuration = try PinsetClientConfiguration(
            serverURL: try #require(URL(string: server.baseURL)),
            customer: try CustomerName("acme"),
            trustCertificates: [otherAnchor],
            stateDirectory: state.path
        )
        await #expect(throws: PinUpdateError.self) { try await PinsetUpdater(configuration: configuration).update() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path).isEmpty)
    }

    func derFile(_ pem: String, in directory: TemporaryDirectory) throws -> String {
        let out = directory.file(UUID().uuidString + ".der")
        #expect(try ProcessRunner.run("openssl", ["x509", "-in", pem, "-outform", "der", "-out", out]).status == 0)
        return out
    }
}
