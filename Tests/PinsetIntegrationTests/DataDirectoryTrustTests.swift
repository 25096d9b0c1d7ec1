#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// A data directory, database or key that another local user owns or can write is refused by every command
/// before it reads anything, with the command that fixes it, and the refusal changes nothing. The ownership
/// cases hand files to `nobody`, which needs root (as in CI).
@Suite(.serialized) struct DataDirectoryTrustTests {
    static let isRoot = geteuid() == 0
    static let nobody: uid_t = getpwnam("nobody")?.pointee.pw_uid ?? 65534

    func populated() throws -> PinsetCLI {
        let cli = try PinsetCLI.initialized()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        return cli
    }

    /// Every entry point that opens the data directory refuses, naming `phrase`; the database is unchanged.
    func expectEveryCommandRefuses(_ cli: PinsetCLI, mentioning phrase: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try cli.databaseDump()
        let out = cli.directory.file("out-\(UUID().uuidString.prefix(6))")
        let commands: [[String]] = [
            ["customer", "list"], ["customer", "add", "globex"], ["host", "add", "acme", "www.example.com"],
            ["pin", "list", "acme"], ["log"], ["sign", "--out", out], ["backup", cli.directory.file("backup.sqlite")],
            ["serve", "--data-dir", cli.dataDir, "--port", "0"],
        ]
        for command in commands {
            let result = try cli.run(command)
            #expect(result.status != 0, "'\(command.joined(separator: " "))' should refuse", sourceLocation: sourceLocation)
            #expect(result.stderr.contains(phrase), "'\(command.joined(separator: " "))': \(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(!FileManager.default.fileExists(atPath: out), sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("backup.sqlite")), sourceLocation: sourceLocation)
        #expect(try cli.databaseDump() == before, sourceLocation: sourceLocation)
    }

    @Test func initRefusesAWorldWritableDirectory() throws {
        let cli = try PinsetCLI()
        defer { cli.remove() }
        try FileManager.default.createDirectory(atPath: cli.dataDir, withIntermediateDirectories: false)
        #expect(chmod(cli.dataDir, 0o777) == 0)
        let result = try cli.run(["init"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("chmod 700 \(cli.dataDir)"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.dataDir).isEmpty, "a refused init must create nothing")
        // The printed fix works.
        #expect(chmod(cli.dataDir, 0o700) == 0)
        #expect(try cli.run(["init"]).status == 0)
    }

    @Test func aGroupWritableDataDirectoryIsRefused() throws {
        let cli = try populated()
        defer { cli.remove() }
        #expect(chmod(cli.dataDir, 0o770) == 0)
        let before = try cli.databaseDump()
        for command in [["customer", "add", "globex"], ["sign", "--out", cli.directory.file("out")], ["serve", "--data-dir", cli.dataDir, "--port", "0"]] {
            let result = try cli.run(command)
            #expect(result.status != 0)
            #expect(result.stderr.contains("chmod 700 \(cli.dataDir)"), "\(command): \(result.stderr)")
        }
        #expect(try cli.databaseDump() == before)
    }

    @Test func aWritableDatabaseIsRefused() throws {
        let cli = try populated()
        defer { cli.remove() }
        #expect(chmod(cli.database, 0o666) == 0)
        let result = try cli.run(["customer", "add", "globex"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("chmod go-w \(cli.database)"), "\(result.stderr)")
    }

    @Test(.enabled(if: isRoot)) func aDatabaseOwnedByAnotherUserIsRefusedEverywhere() throws {
        let cli = try populated()
        defer { cli.remove() }
        #expect(chown(cli.database, Self.nobody, getegid()) == 0)
        try expectEveryCommandRefuses(cli, mentioning: "chown root \(cli.database)")
    }

    @Test(.enabled(if: isRoot)) func aWALFileOwnedByAnotherUserIsRefused() throws {
        let cli = try populated()
        defer { cli.remove() }
        let wal = cli.database + "-wal"
        if !FileManager.default.fileExists(atPath: wal) {
            #expect(FileManager.default.createFile(atPath: wal, contents: nil, attributes: [.posixPermissions: 0o640]))
        }
        #expect(chown(wal, Self.nobody, getegid()) == 0)
        let result = try cli.run(["customer", "list"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("\(wal)': it is owned by 'nobody'"), "\(result.stderr)")
    }

    @Test(.enabled(if: isRoot)) func aDataDirectoryOwnedByAnotherUserIsRefusedEverywhere() throws {
        let cli = try populated()
        defer { cli.remove() }
        #expect(chown(cli.dataDir, Self.nobody, getegid()) == 0)
        try expectEveryCommandRefuses(cli, mentioning: "chown root \(cli.dataDir)")
    }

    @Test func aSymlinkedKeyIsRefused() throws {
        let cli = try populated()
        defer { cli.remove() }
        let key = "\(cli.dataDir)/signing-key.pem"
        let elsewhere = cli.directory.file("real-key.pem")
        #expect(rename(key, elsewhere) == 0)
        #expect(symlink(elsewhere, key) == 0)
        for command in [["sign", "--out", cli.directory.file("out")], ["serve", "--data-dir", cli.dataDir, "--port", "0"]] {
            let result = try cli.run(command)
            #expect(result.status != 0)
            #expect(result.stderr.contains("symbolic link"), "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("out")))
    }

    @Test(.enabled(if: isRoot)) func aKeyOwnedByAnotherUserIsRefused() throws {
        let cli = try populated()
        defer { cli.remove() }
        let key = "\(cli.dataDir)/signing-key.pem"
        #expect(chown(key, Self.nobody, getegid()) == 0)
        for command in [["sign", "--out", cli.directory.file("out")], ["serve", "--data-dir", cli.dataDir, "--port", "0"]] {
            let result = try cli.run(command)
            #expect(result.status != 0)
            #expect(result.stderr.contains("chown root \(key)"), "\(command): \(result.stderr)")
        }
    }
}
