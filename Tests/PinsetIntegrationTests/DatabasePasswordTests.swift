import Foundation
import PinsetTestSupport
import Testing

/// A database password in a command's arguments is in the process list of every user of the host, and one in
/// the configuration file is read by everyone who can read the file: the real binary refuses both, never
/// repeats the password, and names the ways that keep it out of both — which then work.
@Suite(.serialized) struct DatabasePasswordTests {
    func expectRefused(_ result: ProcessRunner.Output, password: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, "\(result.combined)", sourceLocation: sourceLocation)
        #expect(!result.combined.contains(password), "the password is repeated: \(result.combined)", sourceLocation: sourceLocation)
        for way in ["PGPASSWORD", "PGPASSFILE", ".pgpass"] {
            #expect(result.stderr.contains(way), "\(way) is not named: \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test func aPasswordInTheDatabaseLocationIsRefusedOnTheCommandLineAndInTheConfiguration() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let database = try SharedTestPostgres.freshDatabase()
        let password = try SharedTestPostgres.server().password
        let inUserInfo = database.replacingOccurrences(of: "postgres://pinset@", with: "postgres://pinset:\(password)@")
        #expect(inUserInfo != database)
        // Nothing in the environment that could supply the password the other way.
        let bare = ["PGPASSWORD": "", "PGPASSFILE": "/dev/null"]

        for location in [inUserInfo, database + "?password=\(password)", "host=127.0.0.1 dbname=pinset user=pinset password=\(password)"] {
            expectRefused(try ProcessRunner.run(PinsetCLI.binary, ["store", "copy", "--from", cli.database, "--to", location], environment: bare), password: password)
            expectRefused(try ProcessRunner.run(PinsetCLI.binary, ["customer", "list", "--data-dir", cli.dataDir, "--database", location], environment: bare), password: password)
            // Taken as a SQLite path, the key/value string became a database file named after the password.
            #expect(!FileManager.default.fileExists(atPath: location))
        }

        let configuration = try cli.directory.write("config.json", """
            {"dataDirectory": "\(cli.dataDir)", "database": "\(inUserInfo)", "port": 0}
            """)
        let serve = try ProcessRunner.run(PinsetCLI.binary, ["serve", "--config", configuration], environment: bare, timeout: 30)
        expectRefused(serve, password: password)
        #expect(serve.stderr.contains(configuration) && serve.stderr.contains("'database'"), "\(serve.stderr)")

        // The refusals wrote nothing: the target is still empty, and a password file (as the message says)
        // gives the copy its password.
        let passwordFile = try cli.directory.write("pgpass", "127.0.0.1:*:*:pinset:\(password)\n", mode: 0o600)
        let copied = try ProcessRunner.run(
            PinsetCLI.binary, ["store", "copy", "--from", cli.database, "--to", database], environment: ["PGPASSWORD": "", "PGPASSFILE": passwordFile]
        )
        #expect(copied.status == 0, "\(copied.combined)")
        #expect(copied.stdoutText.contains("acme"), "\(copied.combined)")
    }
}
