import Foundation
import PinsetTestSupport
import Testing

/// Spellings that were renamed keep working for one release, with a warning that names the new one.
@Suite struct CLIDeprecatedSpellingTests {
    static let hash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    @Test func forceStillSkipsTheLiveCheckAndSaysWhatReplacedIt() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let added = try cli.run(["pin", "add", "--force", "--reason", "not served", "acme", "api.example.com", "--hash", Self.hash])
        #expect(added.status == 0, "\(added.combined)")
        #expect(added.stderr.contains("--force is deprecated") && added.stderr.contains("--skip-live-check"), "\(added.stderr)")
        let log = try cli.run(["log"])
        #expect(log.stdoutText.contains("live-chain check skipped with --skip-live-check: not served"), "\(log.stdoutText)")
    }

    @Test func topLevelBackupAndRestoreStillWork() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        let backup = cli.directory.file("pinset-backup.sqlite")
        let made = try cli.run(["backup", backup])
        #expect(made.status == 0, "\(made.combined)")
        #expect(made.stderr.contains("'pinset backup' is deprecated") && made.stderr.contains("pinset store backup"), "\(made.stderr)")
        let again = try cli.run(["backup", backup, "--force"])
        #expect(again.status == 0, "\(again.combined)")
        #expect(again.stderr.contains("--force is deprecated") && again.stderr.contains("--overwrite"), "\(again.stderr)")
        let restored = try cli.run(["restore", backup])
        #expect(restored.status == 0, "\(restored.combined)")
        #expect(restored.stderr.contains("'pinset restore' is deprecated") && restored.stderr.contains("pinset store restore"), "\(restored.stderr)")
        #expect(try cli.run(["customer", "list"]).stdoutText.contains("acme"))
    }

    @Test func deprecatedSpellingsAreHiddenFromHelp() throws {
        let help = try ProcessRunner.run(PinsetCLI.binary, ["--help"])
        #expect(help.stdoutText.contains("store") && !help.stdoutText.contains("\n  backup"), "\(help.stdoutText)")
        let pinHelp = try ProcessRunner.run(PinsetCLI.binary, ["pin", "add", "--help"])
        #expect(pinHelp.stdoutText.contains("--skip-live-check") && !pinHelp.stdoutText.contains("--force"), "\(pinHelp.stdoutText)")
    }
}
