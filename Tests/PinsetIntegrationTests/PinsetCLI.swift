import Foundation
import PinsetTestSupport

/// Runs the built `pinset` binary against one temporary data directory.
struct PinsetCLI {
    let directory: TemporaryDirectory
    var dataDir: String { directory.file("data") }
    var database: String { "\(dataDir)/pinset.sqlite" }
    var trustCertificate: String { "\(dataDir)/trust-cert.pem" }

    /// The binary `swift build` produced next to the test bundle (or $PINSET_BINARY).
    static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["PINSET_BINARY"] { return explicit }
        // The test runner is built into the same directory as the binary, in whichever configuration runs.
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let sibling = runner.deletingLastPathComponent().appendingPathComponent("pinset").path
        if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
        for configuration in ["debug", "release"] {
            let candidate = SourceTree.path(".build/\(configuration)/pinset")
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return SourceTree.path(".build/debug/pinset")
    }()

    /// A PostgreSQL database instead of `<data-dir>/pinset.sqlite`: its URL, passed as `--database` to every
    /// command that opens the store and as `database` to servers, and the environment with its password.
    var databaseURL: String?
    var environment: [String: String] = [:]

    init(databaseURL: String? = nil, environment: [String: String] = [:]) throws {
        directory = try TemporaryDirectory(prefix: "pinset-cli")
        self.databaseURL = databaseURL
        self.environment = environment
    }

    /// `pinset init` with a fresh key, once per test.
    static func initialized(keyType: String = "p256", databaseURL: String? = nil, environment: [String: String] = [:]) throws -> PinsetCLI {
        let cli = try PinsetCLI(databaseURL: databaseURL, environment: environment)
        let result = try cli.run(["init", "--key-type", keyType])
        guard result.status == 0 else { throw Failure("pinset init failed: \(result.combined)") }
        return cli
    }

    /// `timeout`: a command that works through a large store in a debug build on a busy machine gets longer.
    @discardableResult
    func run(_ arguments: [String], stdin: [UInt8]? = nil, timeout: TimeInterval = 60) throws -> ProcessRunner.Output {
        var args = arguments
        // Subcommands that take the global options get this test's data directory and a fixed actor.
        let withData: Set<String> = ["init", "customer", "host", "pin", "sign", "log", "backup", "restore", "import", "check", "admin", "review"]
        // `store backup` and `store restore` work on the data directory; `store copy` names both databases.
        let command = arguments.first == "store" ? arguments.dropFirst().first : arguments.first
        if let first = command, withData.contains(first) {
            args += ["--data-dir", dataDir]
            if let databaseURL { args += ["--database", databaseURL] }
            if first != "init" && first != "sign" && first != "log" && first != "backup" && first != "check" { args += ["--actor", "test-admin"] }
        }
        return try ProcessRunner.run(Self.binary, args, stdin: stdin, environment: environment.merging(["PINSET_DATA_DIR": dataDir]) { _, new in new }, timeout: timeout)
    }

    /// A full logical dump of the database by the real `sqlite3` binary: compared before and after a failing
    /// command to prove that it changed nothing. The rows of the `uptake_` tables are left out: a running server
    /// rewrites its uptake snapshot on a timer of its own, whatever a command does.
    func databaseDump() throws -> String {
        let result = try ProcessRunner.run("sqlite3", [database, ".dump"])
        guard result.status == 0 else { throw Failure("sqlite3 .dump failed: \(result.stderr)") }
        return result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("INSERT INTO uptake_") && !$0.hasPrefix("INSERT INTO \"uptake_") }.joined(separator: "\n")
    }

    func remove() { directory.remove() }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
