#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset serve` started with a low soft limit on open files (as systemd's 1024, or macOS's 256) raises it to what
/// `maxConnections` needs, and says so at start when the hard limit does not allow it.
@Suite struct OpenFileLimitTests {
    /// The server under `ulimit -Sn soft -Hn hard`; its soft limit as the kernel reports it, and its log.
    static func serve(soft: Int, hard: Int, maxConnections: Int) throws -> (limit: Int?, log: String) {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let configuration: [String: Any] = ["host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir, "maxConnections": maxConnections]
        let configPath = cli.directory.file("config.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        // The shell sets the limits and execs the server, which keeps its pid.
        let server = try BackgroundProcess("/bin/sh", ["-c", "ulimit -Sn \(soft) && ulimit -Hn \(hard) && exec \"$0\" serve --config \"$1\"", PinsetCLI.binary, configPath],
                                           logDirectory: cli.directory.path, name: "serve")
        defer { server.stop(signal: SIGTERM, timeout: 15) }
        _ = server.waitFor(timeout: 120) { RunningServer.listeningPort(in: server.stdout) != nil }
        let limits = (try? String(contentsOfFile: "/proc/\(server.pid)/limits", encoding: .utf8)) ?? ""
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
        let soft = line.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first }.flatMap { Int($0) }
        return (soft, server.stdout + server.stderr)
    }

    @Test func aLowSoftLimitIsRaisedToWhatTheConnectionsNeed() throws {
        let served = try Self.serve(soft: 256, hard: 4096, maxConnections: 1024)
        #expect(served.limit == 1024 + 128, "maxConnections and the reserve: \(served.log)")
        #expect(!served.log.contains("open-file limit is below"), "\(served.log)")
    }

    @Test func aHardLimitBelowTheNeedIsUsedAndLogged() throws {
        let served = try Self.serve(soft: 256, hard: 512, maxConnections: 1024)
        #expect(served.limit == 512, "\(served.log)")
        #expect(served.log.contains("open-file limit is below what the listeners' connection limits need") && served.log.contains("LimitNOFILE"), "\(served.log)")
    }
}
