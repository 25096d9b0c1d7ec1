#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Stored strings are shown with their control characters escaped, so they can neither forge rows of a table
/// or log nor drive the terminal; JSON output and the stored values stay exact.
@Suite(.serialized) struct OutputEscapingTests {
    static let escape = "\u{1B}[2J\u{1B}[31mpwned\u{07}"

    /// `pinset` with exactly these arguments (PinsetCLI adds its own --actor) and environment.
    func run(_ cli: PinsetCLI, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessRunner.Output {
        try ProcessRunner.run(PinsetCLI.binary, arguments + ["--data-dir", cli.dataDir], environment: environment, timeout: 60)
    }

    @Test func anActorWithControlCharactersIsRefused() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let before = try cli.databaseDump()
        for actor in ["alice\n2026-01-01T00:00:00Z  mallory  acme  customer.remove", "alice\u{1B}[2J", "alice\r"] {
            let result = try run(cli, ["customer", "add", "acme", "--actor", actor])
            #expect(result.status != 0)
            #expect(result.stderr.contains("--actor contains the control character"), "\(result.stderr)")
        }
        #expect(try cli.databaseDump() == before)
        #expect(try run(cli, ["customer", "add", "acme", "--actor", "alice@example.com"]).status == 0)
    }

    /// The actor may also come from the environment ($USER); a newline in it cannot forge an audit row.
    @Test func theAuditLogCannotBeForgedThroughTheActor() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let actor = "alice\n2026-01-01T00:00:00Z  mallory  acme  customer.remove  9  forged"
        let added = try run(cli, ["customer", "add", "acme"], environment: ["USER": actor, "SUDO_USER": actor])
        #expect(added.status == 0, "\(added.combined)")
        let log = try run(cli, ["log"])
        let lines = log.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        #expect(lines.count == 2, "one header and one row: \(log.stdoutText)")
        #expect(log.stdoutText.contains(#"alice\n2026-01-01T00:00:00Z  mallory"#), "\(log.stdoutText)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(try run(cli, ["log", "--json"]).stdout)) as? [[String: Any]])
        #expect(entries.first?["actor"] as? String == actor, "the stored actor stays exact")
    }

    func expectEscaped(_ output: ProcessRunner.Output, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(output.status == 0, "\(output.combined)", sourceLocation: sourceLocation)
        #expect(!output.stdout.contains(0x1B) && !output.stdout.contains(0x07), "raw control characters: \(output.stdoutText)", sourceLocation: sourceLocation)
        #expect(output.stdoutText.contains(#"evil\x1b[2J\x1b[31mpwned\x07"#), "\(output.stdoutText)", sourceLocation: sourceLocation)
    }

    @Test func certificateNamesAndLabelsAreEscapedInListings() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let ca = try TestPKI.certificateAuthority(commonName: "evil" + Self.escape)
        let certificate = try cli.directory.write("evil.pem", ca.certificatePEM)
        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", certificate, "--hash", "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "--label", "evil" + Self.escape])
        #expect(added.status == 0, "\(added.combined)")
        expectEscaped(try cli.run(["customer", "show", "acme"]))
        expectEscaped(try cli.run(["pin", "list", "acme"]))
        expectEscaped(try cli.run(["log"]))
        // JSON keeps the exact stored value.
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["customer", "show", "acme", "--json"]).stdout)) as? [String: Any])
        let pins = try #require((shown["hosts"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]])
        #expect(pins.allSatisfy { ($0["label"] as? String) == "evil" + Self.escape })
    }

    @Test func aLiveServersCertificateNameIsEscaped() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "localhost"]).status == 0)
        let ca = try TestPKI.certificateAuthority()
        let leaf = try TestPKI.leaf(commonName: "evil" + Self.escape, dnsNames: ["localhost"], issuer: ca)
        let caFile = try cli.directory.write("ca.pem", ca.certificatePEM)
        let certFile = try cli.directory.write("leaf.pem", leaf.certificatePEM)
        let keyFile = try cli.directory.write("leaf.key", leaf.privateKeyPEM, mode: 0o600)
        let port = try FreePort.pick()
        let server = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certFile, "-key", keyFile, "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server")
        defer { server.stop() }
        #expect(FreePort.waitUntilListening(port: port))
        let added = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "localhost", "--from-host", "localhost:\(port)", "--ca-file", caFile])
        #expect(added.status == 0, "\(added.combined)")
        expectEscaped(try cli.run(["customer", "show", "acme"]))
        expectEscaped(try cli.run(["pin", "list", "acme", "localhost"]))
    }

    /// logfmt fields of one text log line: unquoted tokens or quoted strings with backslash escapes.
    static func fields(of line: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        var index = line.startIndex
        while index < line.endIndex {
            while index < line.endIndex && line[index] == " " { index = line.index(after: index) }
            guard let equals = line[index...].firstIndex(where: { $0 == "=" || $0 == " " }), line[equals] == "=" else {
                index = line[index...].firstIndex(of: " ") ?? line.endIndex
                continue
            }
            let key = String(line[index..<equals])
            var cursor = line.index(after: equals)
            var value = ""
            if cursor < line.endIndex && line[cursor] == "\"" {
                cursor = line.index(after: cursor)
                while cursor < line.endIndex && line[cursor] != "\"" {
                    if line[cursor] == "\\" { cursor = line.index(after: cursor) }
                    if cursor < line.endIndex { value.append(line[cursor]) }
                    cursor = line.index(after: cursor)
                }
                if cursor < line.endIndex { cursor = line.index(after: cursor) }
            } else {
                let end = line[cursor...].firstIndex(of: " ") ?? line.endIndex
                value = String(line[cursor..<end])
                cursor = end
            }
            fields[key] = value
            index = cursor
        }
        return fields
    }

    @Test func aUserAgentCannotForgeAccessLogFields() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let agent = #"x remote=6.6.6.6 status=200 q="y"#
        let response = try CurlResponse.get("\(server.baseURL)/nobody.json.signed", ["-A", agent], in: cli.directory)
        #expect(response.status == 404)
        #expect(server.stop() == 0)
        let lines = server.process.stdout.split(separator: "\n").filter { $0.contains("user_agent=") }
        #expect(lines.count == 1, "\(server.process.stdout)")
        let fields = Self.fields(of: lines[0])
        #expect(fields["remote"] == "127.0.0.1", "\(lines[0])")
        #expect(fields["status"] == "404", "\(lines[0])")
        #expect(fields["user_agent"] == agent, "\(lines[0])")
        #expect(lines[0].contains(#"user_agent="x remote=6.6.6.6 status=200 q=\"y""#), "\(lines[0])")
    }
}
