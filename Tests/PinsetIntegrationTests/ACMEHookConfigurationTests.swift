#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// How deploy/acme/pinset-acme reads its configuration file, which it runs as shell code: only a regular file
/// that the running user or root owns and no one else can write, checked and read through one descriptor.
/// Fast: no ACME server is involved, the hook stops at the first missing setting after reading the file.
@Suite struct ACMEHookConfigurationTests {
    /// Runs `pinset-acme --config FILE due`: a configuration that sets only PINSET_CUSTOMER is read and then stops
    /// the hook (exit 2) at the missing PINSET_HOST.
    func due(config: String) throws -> ProcessRunner.Output {
        try ProcessRunner.run(ACMERotationTestbed.script, ["--config", config, "due"], environment: ["PINSET_HOST": "", "PINSET_ACME_CONFIG": ""], timeout: 30)
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
    }

    /// Handing the file to another user needs root (as in CI).
    @Test(.enabled(if: geteuid() == 0)) func aConfigurationOfAnotherUserIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-acme-config")
        defer { directory.remove() }
        let marker = directory.file("sourced")
        let config = try directory.write("acme.conf", "PINSET_CUSTOMER=acme\n: >'\(marker)'\n", mode: 0o600)
        let nobody: uid_t = getpwnam("nobody")?.pointee.pw_uid ?? 65534
        #expect(chown(config, nobody, getegid()) == 0)
        let refused = try due(config: config)
        #expect(refused.status == 1 && refused.stderr.contains("belongs to another user (uid \(nobody))") && refused.stderr.contains("chown"), "\(refused.combined)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the file ran")
    }

    /// A link is refused for what it is, with the path to pass instead, and its target does not run.
    @Test func aSymlinkedConfigurationIsRefusedAsALink() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-acme-config")
        defer { directory.remove() }
        let marker = directory.file("sourced")
        let target = try directory.write("real.conf", "PINSET_CUSTOMER=acme\n: >'\(marker)'\n", mode: 0o600)
        let link = directory.file("acme.conf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try due(config: link)
        #expect(refused.status == 1, "\(refused.combined)")
        #expect(refused.stderr.contains("is a symbolic link (to '\(target)')") && refused.stderr.contains("--config '\(target)'"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("writable by group or others"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the link's target ran")
    }

    /// The attack: whoever can write the configuration's directory swaps a file others can write (theirs) in and
    /// out of its path as fast as they can, while the hook runs again and again. The file checked must be the
    /// file that runs, so theirs never does; each run either reads the private file or refuses.
    @Test func aFileSwappedInAfterTheCheckNeverRuns() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-acme-config")
        defer { directory.remove() }
        let marker = directory.file("attacker-ran")
        let genuine = try directory.write("genuine", "PINSET_CUSTOMER=acme\n", mode: 0o600)
        let planted = try directory.write("planted", "PINSET_CUSTOMER=acme\n: >'\(marker)'\n", mode: 0o666)
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

        var outcomes: [Int32: Int] = [:]
        for _ in 0..<150 {
            let run = try due(config: config)
            outcomes[run.status, default: 0] += 1
            if FileManager.default.fileExists(atPath: marker) { break }
            #expect(run.status == 2 || run.status == 1, "\(run.combined)")
        }
        #expect(swapping.isRunning, "the swapper kept swapping: \(swapping.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the planted file ran (outcomes \(outcomes))")
        #expect(outcomes[2, default: 0] > 0, "the genuine file was read in some runs: \(outcomes)")
    }
}
