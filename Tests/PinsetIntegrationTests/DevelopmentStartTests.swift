#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Only the zero-configuration start (`scripts/serve`) may create development data, and what it creates
/// serves a demo bundle at once. A data location that was given and holds nothing is refused.
@Suite(.serialized) struct DevelopmentStartTests {
    /// `pinset serve --port 0` in `directory` with no data location anywhere: no flag, no config, no
    /// $PINSET_DATA_DIR. The shell execs the binary, so the process's pid is the server's.
    func zeroConfigurationServer(in directory: TemporaryDirectory, logs: TemporaryDirectory) throws -> BackgroundProcess {
        try BackgroundProcess("/bin/sh", [
            "-c", #"cd "$1" && unset PINSET_DATA_DIR && exec "$2" serve --port 0"#, "sh", directory.path, PinsetCLI.binary,
        ], logDirectory: logs.path, name: "serve-\(UUID().uuidString.prefix(6))")
    }

    func port(of server: BackgroundProcess) throws -> Int {
        _ = server.waitFor(timeout: 60) { RunningServer.listeningPort(in: server.stdout) != nil }
        guard let port = RunningServer.listeningPort(in: server.stdout) else {
            throw Failure("pinset serve did not start: \(server.stdout)\n\(server.stderr)")
        }
        return port
    }

    @Test func aNewDevelopmentDirectoryServesADemoThatThePrintedCommandsVerify() throws {
        let work = try TemporaryDirectory(prefix: "pinset-first-run")
        let logs = try TemporaryDirectory(prefix: "pinset-first-run-logs")
        defer { work.remove(); logs.remove() }
        let server = try zeroConfigurationServer(in: work, logs: logs)
        defer { server.stop() }
        let port = try port(of: server)
        _ = server.waitFor(timeout: 30) { server.stdout.contains("Remove the demo") }
        let output = server.stdout
        let key = work.file(".pinset-data/signing-key.pem")
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The printed commands, run as printed from the same directory.
        let commands = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            $0.hasPrefix("curl ") || $0.hasPrefix("openssl ") || $0.contains(" verify ")
        }
        #expect(commands.count == 3, "\(output)")
        #expect(commands.first?.contains("http://127.0.0.1:\(port)/demo.json.signed") == true, "\(output)")
        var results: [ProcessRunner.Output] = []
        for command in commands {
            let result = try ProcessRunner.run("/bin/sh", ["-c", "cd '\(work.path)' && \(command)"])
            #expect(result.status == 0, "'\(command)' failed: \(result.combined)")
            results.append(result)
        }
        #expect(results.count == 3)
        if results.count == 3 {
            #expect(results[1].stdoutText.contains(#""example.com""#), "openssl prints the signed JSON: \(results[1].stdoutText)")
            #expect(results[1].stderr.contains("Verification successful"), "\(results[1].stderr)")
            #expect(results[2].stdoutText.contains("OK: customer 'demo'"), "\(results[2].stdoutText)")
            #expect(results[2].stdoutText.components(separatedBy: "pin-sha256").count - 1 == 2, "two demo pins: \(results[2].stdoutText)")
        }
        // The pins are marked as a demo wherever they are listed.
        let listed = try ProcessRunner.run(PinsetCLI.binary, ["pin", "list", "demo", "--data-dir", work.file(".pinset-data")])
        #expect(listed.stdoutText.components(separatedBy: "DEMO key").count - 1 == 2, "\(listed.stdoutText)")
        #expect(server.stop() == 0)
    }

    @Test func anExistingDevelopmentDirectoryIsNeverTouched() throws {
        let work = try TemporaryDirectory(prefix: "pinset-second-run")
        let logs = try TemporaryDirectory(prefix: "pinset-second-run-logs")
        defer { work.remove(); logs.remove() }
        let data = work.file(".pinset-data")
        let initialized = try ProcessRunner.run(PinsetCLI.binary, ["init", "--data-dir", data])
        #expect(initialized.status == 0, "\(initialized.combined)")
        // An admin that happens to have the development operator's name and role: a deployment's, not the
        // development start's, so no token is issued for it and no admin API is opened.
        let developer = try ProcessRunner.run(PinsetCLI.binary, ["admin", "add", "developer", "--role", "operator", "--data-dir", data])
        #expect(developer.status == 0, "\(developer.combined)")
        let dump = try ProcessRunner.run("sqlite3", ["\(data)/pinset.sqlite", ".dump"]).stdoutText
        let server = try zeroConfigurationServer(in: work, logs: logs)
        defer { server.stop() }
        let port = try port(of: server)
        #expect(try CurlResponse.get("http://127.0.0.1:\(port)/demo.json.signed", in: logs).status == 404)
        #expect(server.stop() == 0)
        #expect(!server.stdout.contains("DEMO customer") && !server.stdout.contains("Created"), "\(server.stdout)")
        #expect(!server.stdout.contains("Dashboard:") && !server.stdout.contains("Token:") && !server.stdout.contains("api listening"), "\(server.stdout)")
        #expect(!FileManager.default.fileExists(atPath: "\(data)/development-admin-token"))
        #expect(try ProcessRunner.run("sqlite3", ["\(data)/pinset.sqlite", ".dump"]).stdoutText == dump)
    }

    enum GivenBy: String, CaseIterable {
        case flag, config, environment
    }

    /// A data directory given by flag, config or environment that is missing or empty: refused, nothing created.
    @Test(arguments: GivenBy.allCases, [false, true])
    func aGivenDataDirectoryWithoutDataIsRefused(givenBy: GivenBy, exists: Bool) throws {
        let work = try TemporaryDirectory(prefix: "pinset-missing")
        defer { work.remove() }
        let data = work.file("data")
        if exists { try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false) }
        var arguments = ["serve", "--port", "0"]
        var environment: [String: String] = [:]
        switch givenBy {
        case .flag: arguments += ["--data-dir", data]
        case .config: arguments += ["--config", try work.write("config.json", #"{"dataDirectory": "\#(data)"}"#)]
        case .environment: environment["PINSET_DATA_DIR"] = data
        }
        let result = try ProcessRunner.run("/bin/sh", ["-c", #"cd "$1" && shift && exec "$@""#, "sh", work.path, PinsetCLI.binary] + arguments,
                                           environment: environment, timeout: 30)
        #expect(result.status != 0, "\(result.combined)")
        #expect(result.stderr.contains("pinset init --data-dir \(data)"), "\(result.stderr)")
        if exists {
            #expect(try FileManager.default.contentsOfDirectory(atPath: data).isEmpty)
        } else {
            #expect(!FileManager.default.fileExists(atPath: data))
        }
        #expect(!FileManager.default.fileExists(atPath: work.file(".pinset-data")))
    }
}
