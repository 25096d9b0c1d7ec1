import Foundation
import PinsetTestSupport
import Testing

/// The public listener counts an IPv6 client by its /64, as the admin listener does: one subscriber's block is one
/// client, so rotating through its addresses does not multiply `maxConnectionsPerAddress`.
@Suite(.serialized) struct PublicListenerIPv6Tests {
    @Test(.enabled(if: NetworkNamespace.canCreate, "needs root and 'ip netns' to make a network namespace with an IPv6 /64 on its loopback"))
    func eightAddressesOfOneSlash64ShareOnePerAddressLimit() async throws {
        let namespace = try NetworkNamespace(addresses: AdminListenerFloodTests.floodIPv6Sources)
        defer { namespace.remove() }
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        // A fresh namespace: every port is free in it.
        let port = 8080
        let configuration: [String: Any] = [
            "host": "::1", "port": port, "dataDirectory": cli.dataDir, "maxConnectionsPerAddress": 4, "maxConnections": 1024,
            "requestHeadTimeoutSeconds": 60,
        ]
        let configPath = cli.directory.file("config-ipv6.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        let server = try BackgroundProcess("ip", ["netns", "exec", namespace.name, PinsetCLI.binary, "serve", "--config", configPath],
                                           logDirectory: cli.directory.path, name: "serve-ipv6", environment: cli.environment)
        defer { server.stop() }
        func get(_ path: String) throws -> (status: Int, body: String) {
            let result = try ProcessRunner.run("ip", ["netns", "exec", namespace.name, "curl", "-g", "-sS", "--max-time", "10",
                                                      "-w", "\n%{http_code}", "http://[::1]:\(port)\(path)"])
            guard result.status == 0 else { throw Failure("curl in \(namespace.name): \(result.stderr)") }
            let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }
        let up = server.waitFor(timeout: 60) { (try? get("/healthz"))?.status == 200 }
        try #require(up, "the server in \(namespace.name) did not answer: \(server.stdout)\(server.stderr)")

        // 4 connections from each of 8 addresses: 4 per address would fit, 4 per /64 does not.
        let flood = ConnectionFlood(port: port, destination: "::1", sources: AdminListenerFloodTests.floodIPv6Sources, perSource: 4, mode: .idle,
                                    namespace: namespace.name)
        flood.start()
        defer { flood.stop() }
        func refusedPerAddress() throws -> Int {
            let metrics = try get("/metrics").body
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("pinset_http_connections_refused_total") && $0.contains("per_address_limit") }
            return line.flatMap { Int(Double($0.split(separator: " ").last ?? "") ?? 0) } ?? 0
        }
        let refused = try await eventually(within: 30) { ((try? refusedPerAddress()) ?? 0) >= 28 || flood.error != nil }
        #expect(flood.error == nil)
        #expect(refused, "connections refused for the /64's limit: \((try? refusedPerAddress()) ?? -1)")
        // Another client, ::1, is not in that /64 and is served.
        #expect(try get("/healthz").status == 200)
    }
}
