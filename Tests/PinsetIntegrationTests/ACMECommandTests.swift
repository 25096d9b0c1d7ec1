#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `pinset acme` as the shims and systemd run it: exit statuses for the key states, and how it reads its
/// configuration file (it names the reload command pinset runs): only a regular file that the running user or root
/// owns and no one else can write, checked and read through one descriptor. No ACME server is involved.
@Suite struct ACMECommandTests {
    /// `pinset acme due --config FILE`: a configuration that sets only PINSET_CUSTOMER is read and then refused
    /// (exit 2) for the missing PINSET_HOST.
    func due(config: String) throws -> ProcessRunner.Output {
        try ProcessRunner.run(PinsetCLI.binary, ["acme", "due", "--config", config], environment: ["PINSET_HOST": "", "PINSET_ACME_CONFIG": ""], timeout: 30)
    }

    @Test func theExitStatusFollowsTheKeyStateAndTheConfiguration() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        for command in [["customer", "add", "acme"], ["host", "add", "acme", "api.pinset.test"],
                        ["pin", "add", "--skip-live-check", "--reason", "test", "acme", "api.pinset.test", "--hash", "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="]] {
            let result = try cli.run(command)
            #expect(result.status == 0, "\(command): \(result.combined)")
        }
        let state = cli.directory.file("acme-state")
        let config = try cli.directory.write("acme.conf", """
            PINSET_DATA_DIR=\(cli.dataDir)
            PINSET_CUSTOMER=acme
            PINSET_HOST=api.pinset.test
            PINSET_ACME_STATE_DIR=\(state)
            PINSET_ACME_CERT_FILE=\(cli.directory.file("api.crt"))
            PINSET_ACME_KEY_FILE=\(cli.directory.file("api.key"))

            """, mode: 0o600)
        func acme(_ arguments: [String]) throws -> ProcessRunner.Output {
            try ProcessRunner.run(PinsetCLI.binary, ["acme"] + arguments + ["--config", config], timeout: 60)
        }

        let noKey = try acme(["status"])
        #expect(noKey.status == 4 && noKey.stderr.contains("no next key in \(state): run 'pinset acme bootstrap'"), "\(noKey.combined)")
        let bootstrap = try acme(["bootstrap"])
        #expect(bootstrap.status == 0 && bootstrap.stdoutText.contains("generated and pinned the next key"), "\(bootstrap.combined)")
        #expect(!bootstrap.combined.contains("PRIVATE KEY"))
        // No `pinset serve` shares figures: pinned, but not yet safe; the gate's reason on stderr, no CSR written.
        let status = try acme(["status"])
        #expect(status.status == 3 && status.stdoutText.contains("gate: not-yet") && status.stderr.contains("no running 'pinset serve'"), "\(status.combined)")
        let prepare = try acme(["prepare"])
        #expect(prepare.status == 3 && prepare.stdoutText.isEmpty && prepare.stderr.contains("is pinned but not yet safe to go live"), "\(prepare.combined)")
        #expect(!FileManager.default.fileExists(atPath: "\(state)/next.csr"))
        // No deployed certificate: due (0); with --when-due nothing is skipped, so the gate still answers.
        #expect(try acme(["due"]).status == 0)
        let deploy = try acme(["deploy"])
        #expect(deploy.status == 2 && deploy.stderr.contains("pass --fullchain FILE"), "\(deploy.combined)")

        // A bad setting stops every command before anything is read or written (2).
        let handle = try #require(FileHandle(forWritingAtPath: config))
        handle.seekToEndOfFile()
        handle.write(Data("PINSET_BIN=/usr/bin/pinset\n".utf8))
        handle.closeFile()
        let refused = try acme(["bootstrap"])
        #expect(refused.status == 2 && refused.stderr.contains("line 7: PINSET_BIN is not a setting"), "\(refused.combined)")
    }

    @Test func aPrivateConfigurationIsReadAndOthersAreRefusedWithTheFix() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-acme-config")
        defer { directory.remove() }
        let config = try directory.write("acme.conf", "PINSET_CUSTOMER=acme\n", mode: 0o600)
        let read = try due(config: config)
        #expect(read.status == 2 && read.stderr.contains("PINSET_HOST is not set"), "\(read.combined)")

        #expect(chmod(config, 0o620) == 0)
        let groupWritable = try due(config: config)
        #expect(groupWritable.status == 1 && groupWritable.stderr.contains("writable by group or others (mode 620)")
                && groupWritable.stderr.contains("chmod go-w '\(config)'"), "\(groupWritable.combined)")
        #expect(chmod(config, 0o600) == 0)

        let missing = try due(config: directory.file("absent.conf"))
        #expect(missing.status == 2 && missing.stderr.contains("does not exist"), "\(missing.combined)")
        try FileManager.default.createDirectory(atPath: directory.file("a-directory.conf"), withIntermediateDirectories: false)
        let notAFile = try due(config: directory.file("a-directory.conf"))
        #expect(notAFile.status == 2 && notAFile.stderr.contains("is not a regular file"), "\(notAFile.combined)")

        // A link is refused for what it is, with the path to pass instead.
        let link = directory.file("linked.conf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: config)
        let linked = try due(config: link)
        #expect(linked.status == 1 && linked.stderr.contains("is a symbolic link (to '\(config)')") && linked.stderr.contains("--config '\(config)'"), "\(linked.stderr)")
    }

    /// Handing the file to another user needs root (as in CI).
    @Test(.enabled(if: geteuid() == 0)) func aConfigurationOfAnotherUserIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-acme-config")
        defer { directory.remove() }
        let config = try directory.write("acme.conf", "PINSET_CUSTOMER=acme\n", mode: 0o600)
        let nobody: uid_t = getpwnam("nobody")?.pointee.pw_uid ?? 65534
        #expect(chown(config, nobody, getegid()) == 0)
        let refused = try due(config: config)
        #expect(refused.status == 1 && refused.stderr.contains("belongs to another user (uid \(nobody))") && refused.stderr.contains("chown"), "\(refused.combined)")
    }

    /// Whoever can write the configuration's directory swaps a file others can write (theirs) in and out of its
    /// path as fast as they can while pinset reads it again and again. The file checked is the file read, so
    /// theirs is never used: each run reads the private file (no PINSET_HOST: exit 2) or refuses the open one.
    @Test func aFileSwappedInAfterTheCheckIsNeverUsed() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-acme-config")
        defer { directory.remove() }
        let genuine = try directory.write("genuine", "PINSET_CUSTOMER=acme\n", mode: 0o600)
        let planted = try directory.write("planted", "PINSET_CUSTOMER=acme\nPINSET_HOST=planted.example\n", mode: 0o666)
        #expect(chmod(planted, 0o666) == 0)
        let config = directory.file("acme.conf")
        #expect(link(genuine, config) == 0)
        let swapper = try directory.write("swap.py", """
            import os, sys
            path, genuine, planted = sys.argv[1:4]
            spare = path + ".swap"
            for _ in range(2_000_000):
                for source in (planted, genuine):
                    try:
                        os.unlink(spare)
                    except FileNotFoundError:
                        pass
                    os.link(source, spare)
                    os.replace(spare, path)
            """)
        let swapping = try BackgroundProcess("python3", [swapper, config, genuine, planted], logDirectory: directory.path, name: "swapper")
        defer { swapping.stop() }

        var outcomes: [String: Int] = [:]
        for _ in 0..<60 {
            let run = try due(config: config)
            let outcome = run.status == 2 && run.stderr.contains("PINSET_HOST is not set") ? "genuine"
                : run.status == 1 && run.stderr.contains("writable by group or others") ? "refused" : "other: \(run.status) \(run.stderr)"
            outcomes[outcome, default: 0] += 1
        }
        #expect(swapping.isRunning, "the swapper kept swapping: \(swapping.stderr)")
        #expect(Set(outcomes.keys).isSubset(of: ["genuine", "refused"]), "the planted file was used: \(outcomes)")
        #expect(outcomes["genuine", default: 0] > 0, "the genuine file was read in some runs: \(outcomes)")
    }
}
