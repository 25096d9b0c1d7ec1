#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Standard output that cannot be written (here `/dev/full`; a pipe whose reader went away fails the same way, with
/// `EPIPE` since `pinset` ignores SIGPIPE): the server keeps serving, and an export says it is incomplete, where
/// Foundation's non-throwing write would stop either with a trap.
@Suite struct UnwritableStandardOutputTests {
    @Test func theServerServesWhenItCannotAnnounceItself() async throws {
        let cli = try ServeEndToEndTests.deploymentWithOneCustomer()
        defer { cli.remove() }
        let port = try FreePort.pick()
        let server = try BackgroundProcess(
            "/bin/sh", ["-c", "exec \"$0\" serve --data-dir \"$1\" --host 127.0.0.1 --port \"$2\" >/dev/full", PinsetCLI.binary, cli.dataDir, String(port)],
            logDirectory: cli.directory.path, name: "serve")
        defer { server.stop(signal: SIGTERM, timeout: 15) }
        var status = 0
        let served = try await eventually(within: 60) {
            status = (try? CurlResponse.get("http://127.0.0.1:\(port)/acme.json.signed", in: cli.directory))?.status ?? 0
            return status == 200
        }
        #expect(served, "last status \(status): \(server.stderr.suffix(2000))")
        #expect(!server.stderr.contains("Fatal error"), "\(server.stderr.suffix(2000))")
    }

    @Test func anExportToStandardOutputThatFailsSaysSoAndFails() throws {
        let cli = try ServeEndToEndTests.deploymentWithOneCustomer()
        defer { cli.remove() }
        let export = try ProcessRunner.run("/bin/sh", [
            "-c", "exec \"$0\" export acme --format okhttp --data-dir \"$1\" --actor test-admin >/dev/full", PinsetCLI.binary, cli.dataDir,
        ])
        #expect(export.status == 1, "\(export.combined)")
        #expect(export.stderr.contains("Writing to standard output failed") && export.stderr.contains("--out FILE"), "\(export.combined)")
    }
}
