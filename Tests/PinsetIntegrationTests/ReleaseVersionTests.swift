import Foundation
import PinsetCore
import PinsetTestSupport
import Testing

/// Which release ran is told the same everywhere an operator or a bug report looks: `pinset --version`, the server's
/// `/status` and `pinset status`, the `pinset_build_info` metric, and the `User-Agent` the client sends.
@Suite struct ReleaseVersionTests {
    @Test func theCLIPrintsItsRelease() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let result = try cli.run(["--version"])
        #expect(result.status == 0)
        #expect(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == PinsetRelease.version)
        // Semantic versioning, as the release notes and the metric's label use it.
        #expect(PinsetRelease.version.split(separator: ".").count == 3 && PinsetRelease.version.split(separator: ".").allSatisfy { Int($0) != nil })
    }

    @Test func theServerAndTheClientNameTheSameRelease() throws {
        let cli = try ServeEndToEndTests.deploymentWithOneCustomer()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }

        let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        let document = try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any]
        #expect(document?["version"] as? String == PinsetRelease.version, "\(document ?? [:])")
        let printed = try cli.run(["status", "--url", server.baseURL])
        #expect(String(decoding: printed.stdout, as: UTF8.self).contains("version:              \(PinsetRelease.version)"), "\(printed.combined)")

        let metrics = String(decoding: try CurlResponse.get("\(server.baseURL)/metrics", in: cli.directory).body, as: UTF8.self)
        #expect(metrics.contains(#"pinset_build_info{version="\#(PinsetRelease.version)"} 1"#), "\(metrics.prefix(3000))")

        let update = try cli.run([
            "client", "update", "--server", server.baseURL + "/", "--customer", "acme", "--trust", cli.trustCertificate,
            "--state-dir", cli.directory.file("app/state"), "--json",
        ])
        #expect(update.status == 0, "\(update.combined)")
        // The access log writes what the client sent (quoted only where it holds a space or a quote).
        let logged = server.process.waitFor(timeout: 30) {
            server.process.stdout.split(separator: "\n").contains { $0.contains("target=/acme.json.signed") && $0.hasSuffix("user_agent=\(PinsetRelease.userAgent)") }
        }
        #expect(logged, "the client names itself and its release: \(server.process.stdout.suffix(2000))")
    }
}
