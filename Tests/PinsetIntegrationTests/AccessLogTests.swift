#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// The access log of a real `pinset serve`, written to a file as operators run it: every answered request is a
/// whole line, written within the flush interval while the server runs, none lost at SIGTERM, and logrotate's
/// move-then-SIGHUP splits the lines between the old file and a new one without losing or repeating any.
@Suite(.serialized) struct AccessLogTests {
    static func lines(_ path: String) -> [Substring] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// `count` requests on one keep-alive connection, with a User-Agent the log must escape.
    static func fetch(_ server: RunningServer, _ cli: PinsetCLI, count: Int, tag: String) throws {
        let urls = (0..<count).map { "\(server.baseURL)/acme.json.signed?\(tag)-\($0)" }
        let fetched = try ProcessRunner.run("curl", ["-sS", "-A", "agent \"\(tag)\" =x", "--max-time", "60"] + urls.flatMap { ["-o", "/dev/null", $0] })
        #expect(fetched.status == 0, "\(fetched.stderr)")
    }

    @Test(arguments: ["text", "json"]) func everyRequestIsLoggedOnceAcrossARotationAndTheStop(_ format: String) async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let log = cli.directory.file("access.log")
        let server = try RunningServer(cli: cli, extraConfiguration: ["accessLogFile": log, "logFormat": format])
        defer { server.stop() }

        try Self.fetch(server, cli, count: 200, tag: "before")
        // Written while the server runs, within the flush interval, without a stop.
        var written = Self.lines(log)
        for _ in 0..<100 where written.count < 200 {
            try await Task.sleep(for: .milliseconds(100))
            written = Self.lines(log)
        }
        #expect(written.count == 200)

        // logrotate: move the file away, then SIGHUP; the server opens a new file under the old name.
        let rotated = log + ".1"
        #expect(rename(log, rotated) == 0)
        #expect(kill(server.process.pid, SIGHUP) == 0)
        var reopened = false
        for _ in 0..<100 where !reopened {
            try await Task.sleep(for: .milliseconds(50))
            reopened = FileManager.default.fileExists(atPath: log)
        }
        #expect(reopened)
        try Self.fetch(server, cli, count: 150, tag: "after")
        #expect(server.stop() == 0)

        let old = Self.lines(rotated)
        let new = Self.lines(log)
        #expect(old.count == 200 && new.count == 150, "old \(old.count), new \(new.count)")
        #expect(old.allSatisfy { $0.contains("before") } && new.allSatisfy { $0.contains("after") })
        for line in old + new {
            if format == "json" {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(line)")
                #expect(object["msg"] == "request" && object["status"] == "200" && object["method"] == "GET" && object["remote"] == "127.0.0.1")
                #expect(object["user_agent"]?.hasPrefix("agent \"") == true && object["target"]?.hasPrefix("/acme.json.signed?") == true)
            } else {
                #expect(line.contains(" info pinset: request bytes=") && line.contains(" method=GET remote=127.0.0.1 status=200 target=/acme.json.signed?"), "\(line)")
                #expect(line.hasSuffix(#"=x""#) && line.contains(#"user_agent="agent \""#), "the User-Agent is quoted and escaped: \(line)")
            }
        }
    }

    @Test func aLogFileThatCannotBeOpenedStopsTheStartWithItsPath() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let missing = cli.directory.file("no-such-directory/access.log")
        #expect { try RunningServer(cli: cli, extraConfiguration: ["accessLogFile": missing]) } throws: { error in
            "\(error)".contains(missing) && "\(error)".contains("directory exists")
        }
    }
}
