#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset serve` started with a low soft limit on open files (as systemd's 1024, or macOS's 256) raises it to what
/// `maxConnections` needs, and says so at start when the hard limit does not allow it.
@Suite struct OpenFileLimitTests {
    /// `pinset serve` of `cli`'s deployment with `configuration` added, started by a shell that runs `limits` (such as
    /// `ulimit -n 96`) and then execs the server, which keeps its pid; returned once it listens.
    static func start(_ cli: PinsetCLI, limits: String, _ configuration: [String: Any]) throws -> BackgroundProcess {
        let base: [String: Any] = ["host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir]
        let configPath = cli.directory.file("config.json")
        try JSONSerialization.data(withJSONObject: base.merging(configuration) { $1 }).write(to: URL(fileURLWithPath: configPath))
        let server = try BackgroundProcess("/bin/sh", ["-c", "\(limits) && exec \"$0\" serve --config \"$1\"", PinsetCLI.binary, configPath],
                                           logDirectory: cli.directory.path, name: "serve")
        _ = server.waitFor(timeout: 120) { RunningServer.listeningPort(in: server.stdout) != nil }
        return server
    }

    /// The server under `ulimit -Sn soft -Hn hard`; its soft limit as the kernel reports it, and its log.
    static func serve(soft: Int, hard: Int, maxConnections: Int) throws -> (limit: Int?, log: String) {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let server = try start(cli, limits: "ulimit -Sn \(soft) && ulimit -Hn \(hard)", ["maxConnections": maxConnections])
        defer { server.stop(signal: SIGTERM, timeout: 15) }
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

    /// More clients than the process has descriptors (a hard limit of 96, `maxConnections` 400): each transport
    /// sheds pending connections with its spare descriptor and counts them, rather than spinning on a queue it
    /// cannot drain, and serves again once the flood is gone.
    @Test(arguments: ["epoll", "dispatch"]) func outOfDescriptorsTheServerShedsCountsAndRecovers(transport: String) async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let server = try Self.start(cli, limits: "ulimit -n 96", ["transport": transport, "maxConnections": 400, "maxConnectionsPerAddress": 400])
        defer { server.stop(signal: SIGTERM, timeout: 15) }
        let port = try #require(RunningServer.listeningPort(in: server.stdout), "\(server.stdout)\(server.stderr)")

        let flood = ConnectionFlood(port: port, sources: (1...4).map { "127.0.3.\($0)" }, perSource: 40, mode: .idle, lifetime: 60)
        flood.start()
        let shed = try await eventually(within: 30) { flood.reopened > 20 }
        flood.stop()
        #expect(flood.error == nil)
        #expect(shed, "160 connections against 96 descriptors: the server closed only \(flood.reopened)")

        var metrics = ""
        let served = try await eventually(within: 30) {
            metrics = (try? CurlResponse.get("http://127.0.0.1:\(port)/metrics", in: cli.directory)).map { String(decoding: $0.body, as: UTF8.self) } ?? ""
            return metrics.contains("pinset_http_open_connections")
        }
        #expect(served, "the server answers again once the flood is gone: \(server.stderr.suffix(2000))")
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(#"pinset_http_connections_refused_total{reason="out_of_descriptors"}"#) }
        let count: Double? = line?.split(separator: " ").last.flatMap { Double($0) }
        let pauses = metrics.split(separator: "\n").first { $0.hasPrefix("pinset_http_accept_pauses_total") }
        #expect((count ?? 0) > 0, "\(line.map(String.init) ?? "no out_of_descriptors line"); \(pauses.map(String.init) ?? "no accept-pause line")")
    }

    @Test func aHardLimitBelowTheNeedIsUsedAndLogged() throws {
        let served = try Self.serve(soft: 256, hard: 512, maxConnections: 1024)
        #expect(served.limit == 512, "\(served.log)")
        #expect(served.log.contains("open-file limit is below what the listeners' connection limits need") && served.log.contains("LimitNOFILE"), "\(served.log)")
    }
}
