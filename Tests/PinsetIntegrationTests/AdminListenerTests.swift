import Foundation
import PinsetTestSupport
import Testing

/// `pinset serve` with an admin listener: operator endpoints leave the public port.
@Suite(.serialized) struct AdminListenerTests {
    static func adminPort(in output: String) -> Int? {
        for line in output.split(separator: "\n") where line.hasPrefix("pinset admin listening on ") {
            return line.split(separator: ":").last.flatMap { Int($0) }
        }
        return nil
    }

    @Test func metricsAndStatusAreServedOnlyOnTheAdminListener() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", HostileClientTests.pinHash, "--hash", HostileClientTests.backupHash]).status == 0)
        // The two idle connections counted below must outlast a slow scrape.
        let server = try RunningServer(cli: cli, extraConfiguration: ["admin": ["host": "127.0.0.1", "port": 0], "requestHeadTimeoutSeconds": 60])
        defer { server.stop() }
        var admin: Int?
        _ = server.process.waitFor(timeout: 60) {
            admin = Self.adminPort(in: server.process.stdout)
            return admin != nil
        }
        let adminPort = try #require(admin, "no admin listening line: \(server.process.stdout)")
        #expect(adminPort != server.port)
        let adminURL = "http://127.0.0.1:\(adminPort)"

        #expect(try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory).status == 200)
        #expect(try CurlResponse.get("\(server.baseURL)/healthz", in: cli.directory).status == 200)
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)
        #expect(try CurlResponse.get("\(server.baseURL)/metrics", in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/status", in: cli.directory).status == 404)

        // Two idle connections held open on the public port are counted when /metrics is scraped.
        let held = try (0..<2).map { _ in try RawClient.connect(port: server.port) }
        defer { held.forEach { close($0) } }
        var openGauge: Double?
        for _ in 0..<50 where openGauge != 2 {
            let scraped = try CurlResponse.get("\(adminURL)/metrics", in: cli.directory)
            openGauge = String(decoding: scraped.body, as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix("pinset_http_open_connections ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
            if openGauge != 2 { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(openGauge == 2)

        let metrics = try CurlResponse.get("\(adminURL)/metrics", in: cli.directory)
        #expect(metrics.status == 200)
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("pinset_http_requests_total"))
        #expect(try CurlResponse.get("\(adminURL)/status", in: cli.directory).status == 200)
        #expect(try CurlResponse.get("\(adminURL)/readyz", in: cli.directory).status == 200)
        #expect(try CurlResponse.get("\(adminURL)/acme.json.signed", in: cli.directory).status == 404)

        let status = try cli.run(["status", "--url", adminURL])
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        let publicStatus = try cli.run(["status", "--url", server.baseURL])
        #expect(publicStatus.status != 0)
    }
}
