#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// An operator points `serve` (the `publicSuffixList` key, `--public-suffix-list`) and the CLI
/// (`--public-suffix-list`, `$PINSET_PUBLIC_SUFFIX_LIST`) at a newer Public Suffix List file: it decides
/// include-subdomains, `/status` names it with its version, and a file that cannot be used stops the start.
@Suite(.serialized) struct PublicSuffixListConfigurationTests {
    /// A list newer than the embedded one in the one way that shows here: it has `pages.example.org` as a suffix.
    static let newerList = """
        // VERSION: 2026-11-20_07-47-10_UTC
        // COMMIT: 3f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a
        // ===BEGIN ICANN DOMAINS===
        com
        org
        co.uk
        // ===END ICANN DOMAINS===
        // ===BEGIN PRIVATE DOMAINS===
        pages.example.org
        // ===END PRIVATE DOMAINS===

        """

    @Test func serveReportsTheConfiguredListInStatus() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let list = try cli.directory.write("public_suffix_list.dat", Self.newerList)
        let server = try RunningServer(cli: cli, extraConfiguration: ["publicSuffixList": list])
        defer { server.stop() }
        let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        #expect(status.status == 200)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])
        let section = try #require(document["publicSuffixList"] as? [String: Any], "\(document)")
        #expect(section["source"] as? String == list)
        #expect(section["version"] as? String == "2026-11-20_07-47-10_UTC")
        #expect(section["commit"] as? String == "3f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a")
        #expect(section["rules"] as? Int == 4)
        // `pinset status` prints it from the same document.
        let printed = try ProcessRunner.run(PinsetCLI.binary, ["status", "--url", server.baseURL])
        #expect(printed.stdoutText.contains("public suffix list:   \(list), 2026-11-20_07-47-10_UTC, commit 3f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a (4 rules)"), "\(printed.combined)")
        #expect(server.stop() == 0)
    }

    @Test func serveWithoutAListReportsTheEmbeddedCopy() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let status = try CurlResponse.get("\(server.baseURL)/status", in: cli.directory)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])
        let section = try #require(document["publicSuffixList"] as? [String: Any], "\(document)")
        #expect(section["source"] as? String == "embedded")
        #expect(section["version"] as? String == "publicsuffix 20230209.2326-1 (Debian)")
        #expect(server.stop() == 0)
    }

    enum GivenBy: String, CaseIterable {
        case configuration, flag
    }

    /// A named list that is missing or is not a list stops `serve` before it listens, naming the file.
    @Test(arguments: GivenBy.allCases, [false, true])
    func serveRefusesAListFileItCannotUse(givenBy: GivenBy, exists: Bool) throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let list = cli.directory.file("public_suffix_list.dat")
        if exists { _ = try cli.directory.write("public_suffix_list.dat", "<html><body>503 Service Unavailable</body></html>\n") }
        var configuration: [String: Any] = ["port": 0, "dataDirectory": cli.dataDir]
        var arguments: [String] = []
        switch givenBy {
        case .configuration: configuration["publicSuffixList"] = list
        case .flag: arguments = ["--public-suffix-list", list]
        }
        let config = cli.directory.file("config.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: config))
        let result = try ProcessRunner.run(PinsetCLI.binary, ["serve", "--config", config] + arguments, timeout: 60)
        #expect(result.status != 0, "\(result.combined)")
        #expect(!result.stdoutText.contains("pinset listening"), "\(result.stdoutText)")
        #expect(result.stderr.contains("'\(list)'"), "\(result.stderr)")
        #expect(result.stderr.contains(exists ? "cannot be used" : "Cannot read the Public Suffix List file"), "\(result.stderr)")
    }

    @Test func theCLIChecksIncludeSubdomainsAgainstTheNamedList() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let list = try cli.directory.write("public_suffix_list.dat", Self.newerList)
        let before = try cli.databaseDump()
        let refused = try cli.run(["host", "add", "acme", "pages.example.org", "--include-subdomains", "--public-suffix-list", list])
        #expect(refused.status != 0, "\(refused.combined)")
        #expect(refused.stderr.contains("is a public suffix") && refused.stderr.contains("the configured list, version 2026-11-20_07-47-10_UTC"), "\(refused.stderr)")
        let fromEnvironment = try ProcessRunner.run(PinsetCLI.binary, [
            "host", "add", "acme", "pages.example.org", "--include-subdomains", "--data-dir", cli.dataDir,
        ], environment: ["PINSET_PUBLIC_SUFFIX_LIST": list])
        #expect(fromEnvironment.status != 0 && fromEnvironment.stderr.contains("the configured list, version 2026-11-20_07-47-10_UTC"), "\(fromEnvironment.combined)")
        #expect(try cli.databaseDump() == before)

        // A named file that cannot be read stops the command before it changes anything.
        let missing = cli.directory.file("missing.dat")
        let unreadable = try ProcessRunner.run(PinsetCLI.binary, ["customer", "add", "other", "--data-dir", cli.dataDir], environment: ["PINSET_PUBLIC_SUFFIX_LIST": missing])
        #expect(unreadable.status != 0 && unreadable.stderr.contains("'\(missing)'"), "\(unreadable.combined)")
        #expect(try cli.databaseDump() == before)

        // The embedded list does not know that suffix.
        let accepted = try cli.run(["host", "add", "acme", "pages.example.org", "--include-subdomains"])
        #expect(accepted.status == 0, "\(accepted.combined)")
    }
}
