import Foundation
import PinsetTestSupport
import Testing

/// What operators use around the server: status, backups, structured logs, configuration errors.
@Suite(.serialized) struct OperationsTests {
    @Test func statusReportsTheServersView() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let status = try cli.run(["status", "--url", server.baseURL])
        #expect(status.status == 0, "\(status.combined)")
        #expect(status.stdoutText.contains("customers served:     1"))
        #expect(status.stdoutText.contains("ready:                yes"))
        let json = try cli.run(["status", "--url", server.baseURL, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        #expect(report["ready"] as? Bool == true)
        #expect(report["lastSigningPass"] is String)
        let unreachable = try cli.run(["status", "--url", "http://127.0.0.1:\(try FreePort.pick())"])
        #expect(unreachable.status != 0)
        #expect(unreachable.stderr.contains("Could not reach"))
    }

    @Test func backupWhileServingAndRestore() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        let backup = cli.directory.file("backup.sqlite")
        let made = try cli.run(["store", "backup", backup])
        #expect(made.status == 0, "\(made.combined)")
        #expect(try ProcessRunner.run("sqlite3", [backup, "PRAGMA integrity_check"]).stdoutText == "ok\n")
        // An edit after the backup, then a restore: the edit is gone, everything else is back.
        #expect(try cli.run(["customer", "add", "after-backup"]).status == 0)
        #expect(server.stop() == 0)
        let restored = try cli.run(["store", "restore", backup])
        #expect(restored.status == 0, "\(restored.combined)")
        let list = try cli.run(["customer", "list", "--json"])
        let names = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(names == ["acme"])
        let restarted = try RunningServer(cli: cli)
        defer { restarted.stop() }
        #expect(try CurlResponse.get("\(restarted.baseURL)/acme.json.signed", in: cli.directory).status == 200)
    }

    @Test func jsonLogsAreOneObjectPerLine() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["logFormat": "json"])
        _ = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
        #expect(server.stop() == 0)
        let lines = server.process.stdout.split(separator: "\n").filter { !$0.hasPrefix("pinset listening on") }
        #expect(lines.count >= 3)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] is String && object?["msg"] is String, "not a JSON log line: \(line)")
        }
        #expect(lines.contains { $0.contains("\"target\":\"/acme.json.signed\"") && $0.contains("\"status\":\"200\"") })
        // The key is never logged.
        let key = try String(contentsOfFile: "\(cli.dataDir)/signing-key.pem", encoding: .utf8)
        let keyBody = key.split(separator: "\n").dropFirst().first.map(String.init) ?? "unreachable"
        #expect(!server.process.stdout.contains(keyBody))
        #expect(!server.process.stderr.contains(keyBody))
    }

    @Test func badConfigurationStopsTheServerNamingTheKey() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let config = try cli.directory.write("bad.json", #"{"dataDirectory": "\#(cli.dataDir)", "resignInterval": 60}"#)
        let result = try cli.run(["serve", "--config", config])
        #expect(result.status != 0)
        #expect(result.stderr.contains("unknown key 'resignInterval'"), "\(result.stderr)")
    }

    @Test func theKeyIsNeverServed() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        for path in ["/signing-key.pem", "/signing-key.pem.json.signed", "/pinset.sqlite", "/trust-cert.pem", "/.pinset-data/signing-key.pem"] {
            #expect(try CurlResponse.get(server.baseURL + path, ["--path-as-is"], in: cli.directory).status == 404, "\(path)")
        }
    }
}
