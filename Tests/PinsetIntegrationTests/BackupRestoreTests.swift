#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// The backup and restore procedure of docs/operations.md with the real binary, the real server and the real client: apps
/// that stored versions newer than the backup must accept what the restored database serves.
@Suite(.serialized) struct BackupRestoreTests {
    static let currentPin = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
    static let backupPin = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    static func hash(_ byte: UInt8) -> String { Data(repeating: byte, count: 32).base64EncodedString() }

    func populated() throws -> PinsetCLI {
        let cli = try PinsetCLI.initialized()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.currentPin, "--hash", Self.backupPin]).status == 0)
        return cli
    }

    func updater(for cli: PinsetCLI, server: RunningServer, state: TemporaryDirectory) throws -> PinsetUpdater {
        let trust = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/trust-cert.der")))
        return PinsetUpdater(configuration: try PinsetClientConfiguration(
            serverURL: try #require(URL(string: server.baseURL)), customer: try CustomerName("acme"),
            trustCertificates: [trust], stateDirectory: state.path
        ))
    }

    /// Updates until the client holds `pin` (the server re-signs within a poll interval of an edit). Every
    /// update must be accepted: a refusal is the freeze this guards against.
    func updateUntil(_ updater: PinsetUpdater, holds pin: String) async throws -> VerifiedPinSet {
        var latest = try await updater.update()
        for _ in 0..<50 where !(latest.hosts.first?.spkiSHA256.map(\.base64).contains(pin) ?? false) {
            try await Task.sleep(for: .milliseconds(100))
            latest = try await updater.update()
        }
        return latest
    }

    @Test func appsAcceptTheRestoredDatabaseFollowingTheReadmeProcedure() async throws {
        let cli = try populated()
        defer { cli.remove() }
        let state = try TemporaryDirectory(prefix: "pinset-client-state")
        defer { state.remove() }
        let server = try RunningServer(cli: cli)
        var serverStopped = false
        defer { if !serverStopped { server.stop() } }
        let app = try updater(for: cli, server: server, state: state)
        let versionA = try await app.update().version

        let backup = cli.directory.file("pinset-backup.sqlite")
        let made = try cli.run(["store", "backup", backup])
        #expect(made.status == 0, "\(made.combined)")

        // After the backup: edits that the app picks up, so it holds a version newer than the backup's.
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.hash(0x31)]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.hash(0x32)]).status == 0)
        let versionB = try await updateUntil(app, holds: Self.hash(0x32)).version
        #expect(versionB > versionA)

        // The procedure: a restore is refused while a server has the database open...
        let before = try cli.databaseDump()
        let refused = try cli.run(["store", "restore", backup])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Stop every server"), "\(refused.stderr)")
        #expect(try cli.databaseDump() == before)
        // ...so stop the servers, restore, start them again.
        #expect(server.stop() == 0)
        serverStopped = true
        let restored = try cli.run(["store", "restore", backup, "--json"])
        #expect(restored.status == 0, "\(restored.combined)")
        // The edits after the backup are history the restore keeps; no admin existed, so no credential changed.
        let report = try #require(try JSONSerialization.jsonObject(with: Data(restored.stdout)) as? [String: Any], "\(restored.stdoutText)")
        let credentials = try #require(report["credentials"] as? [String: Any], "\(restored.stdoutText)")
        #expect(credentials["tokensRevoked"] as? Int == 0 && (credentials["auditEntriesCarried"] as? Int ?? 0) >= 2, "\(restored.stdoutText)")
        let restarted = try RunningServer(cli: cli)
        defer { restarted.stop() }
        let appAfterRestart = try updater(for: cli, server: restarted, state: state)

        // One edit, a key rotation: the app must accept the next bundle and hold the new pin.
        let rotation = Self.hash(0x77)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", rotation]).status == 0)
        let latest = try await updateUntil(appAfterRestart, holds: rotation)
        let pins = Set(latest.hosts.first?.spkiSHA256.map(\.base64) ?? [])
        #expect(pins == [Self.currentPin, Self.backupPin, rotation])
        #expect(latest.version > versionB)
        guard case .loaded(let stored) = await PinsetUpdater(configuration: appAfterRestart.configuration).loadStoredPins() else {
            Issue.record("the accepted pins were not stored")
            return
        }
        #expect(stored.version == latest.version)

        let log = try cli.run(["log", "--customer", "acme", "--limit", "2"])
        #expect(log.stdoutText.contains("customer.restore"), "\(log.stdoutText)")
    }

    /// A backup copied over the database by hand must not be served: every command and the server refuse,
    /// naming the command that makes it safe.
    @Test func aBackupCopiedIntoPlaceByHandIsRefusedUntilRestored() throws {
        let cli = try populated()
        defer { cli.remove() }
        let backup = cli.directory.file("pinset-backup.sqlite")
        #expect(try cli.run(["store", "backup", backup]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.hash(0x41)]).status == 0)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.database + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: cli.database)

        let list = try cli.run(["customer", "list"])
        #expect(list.status != 0)
        #expect(list.stderr.contains("pinset store restore '\(cli.database)' --data-dir '\(cli.dataDir)'"), "\(list.stderr)")
        let serve = try cli.run(["serve", "--data-dir", cli.dataDir, "--port", "0"])
        #expect(serve.status != 0)
        #expect(serve.stderr.contains("pinset store restore"), "\(serve.stderr)")

        let restored = try cli.run(["store", "restore", cli.database])
        #expect(restored.status == 0, "\(restored.combined)")
        let after = try cli.run(["customer", "list"])
        #expect(after.status == 0, "\(after.combined)")
    }

    /// Backing up onto the signing key replaced it with a SQLite file, and onto the -wal file of a served
    /// database broke every command.
    @Test func backupRefusesTheDataDirectoryAndExistingFiles() throws {
        let cli = try populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let key = "\(cli.dataDir)/signing-key.pem"
        let keyBytes = try #require(FileManager.default.contents(atPath: key))
        #expect(FileManager.default.fileExists(atPath: cli.database + "-wal"))
        let link = cli.directory.file("innocent.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: key)
        try FileManager.default.createDirectory(atPath: cli.directory.file("elsewhere"), withIntermediateDirectories: true)

        let before = try cli.databaseDump()
        for destination in [key, cli.database + "-wal", "\(cli.dataDir)/new.sqlite", link, cli.directory.file("elsewhere/../data/signing-key.pem")] {
            for force in [[], ["--overwrite"]] {
                let result = try cli.run(["store", "backup", destination] + force)
                #expect(result.status != 0, "backup to \(destination) \(force) must fail")
                #expect(result.stderr.contains("outside the data directory"), "\(result.stderr)")
                #expect(FileManager.default.contents(atPath: key) == keyBytes)
                #expect(try cli.databaseDump() == before)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: "\(cli.dataDir)/new.sqlite"))

        let existing = try cli.directory.write("precious.txt", "an operator's notes\n")
        let refused = try cli.run(["store", "backup", existing])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("already exists") && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an operator's notes\n")
        #expect(try cli.databaseDump() == before)
        let forced = try cli.run(["store", "backup", existing, "--overwrite"])
        #expect(forced.status != 0 && forced.stderr.contains("not a Pinset backup"), "\(forced.combined)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an operator's notes\n")
        #expect(try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory).status == 200)
    }

    /// `--overwrite` (once `--force`) overwrote a customer's own signing key kept in a key directory outside the data directory
    /// (the backup command is not told where it is), and any other file. It replaces an older backup only.
    @Test func overwriteReplacesAnOlderBackupAndNothingElse() throws {
        let cli = try populated()
        defer { cli.remove() }
        let keys = cli.directory.file("customer-keys")
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let added = try cli.run(["customer", "add", "own", "--key-type", "p256", "--customer-key-dir", keys])
        #expect(added.status == 0, "\(added.combined)")
        let other = try PinsetCLI.initialized()
        defer { other.remove() }
        let notes = try cli.directory.write("notes.txt", "an operator's notes\n")

        let before = try cli.databaseDump()
        for (file, what) in [
            ("\(keys)/own/signing-key.pem", "a private key"),
            ("\(keys)/own/trust-cert.pem", "a certificate (PEM)"),
            ("\(keys)/own/trust-cert.der", "a certificate (DER)"),
            ("\(other.dataDir)/trust-cert.der", "a certificate (DER)"),
            ("\(other.dataDir)/signing-key.pem", "a private key"),
            (other.database, "a Pinset database without a backup mark"),
            (notes, "not a Pinset backup"),
        ] {
            let bytes = try #require(FileManager.default.contents(atPath: file))
            let result = try cli.run(["store", "backup", file, "--overwrite"])
            #expect(result.status != 0, "backup over \(file) must fail")
            #expect(result.stderr.contains(what) && result.stderr.contains("Nothing was written"), "\(file): \(result.stderr)")
            #expect(FileManager.default.contents(atPath: file) == bytes, "\(file) changed")
            #expect(try cli.databaseDump() == before)
        }
        // Told where the key directory is, the backup refuses it as a whole.
        let inKeys = try cli.run(["store", "backup", "\(keys)/new.sqlite", "--customer-key-dir", keys])
        #expect(inKeys.status != 0 && inKeys.stderr.contains(keys), "\(inKeys.combined)")
        #expect(!FileManager.default.fileExists(atPath: "\(keys)/new.sqlite"))

        let older = cli.directory.file("pinset-backup.sqlite")
        #expect(try cli.run(["store", "backup", older]).status == 0)
        #expect(try cli.run(["customer", "add", "later"]).status == 0)
        let replaced = try cli.run(["store", "backup", older, "--overwrite"])
        #expect(replaced.status == 0, "\(replaced.combined)")
        #expect(try ProcessRunner.run("sqlite3", [older, "SELECT name FROM customer ORDER BY name"]).stdoutText == "acme\nlater\nown\n")
    }

    /// `restore` into a new SQLite file, then `store copy` into an empty database, lost the revocation floor
    /// set after the backup. With the real binary: refused without the served database, carried with it.
    @Test func restoreIntoANewFileThenCopyKeepsTheRevocationFloor() throws {
        let cli = try populated()
        defer { cli.remove() }
        let backup = cli.directory.file("pinset-backup.sqlite")
        #expect(try cli.run(["store", "backup", backup]).status == 0)
        let revoked = try cli.run(["signer", "revoke-earlier", "--data-dir", cli.dataDir, "--actor", "test-admin", "--json"])
        #expect(revoked.status == 0, "\(revoked.combined)")
        let floor = try #require(try JSONSerialization.jsonObject(with: Data(revoked.stdout)) as? [String: Any])["signersNotBefore"] as? Int
        let restored = cli.directory.file("restored.sqlite")

        let refused = try cli.run(["store", "restore", backup, "--database", restored])
        #expect(refused.status != 0 && refused.stderr.contains("--replacing") && refused.stderr.contains("Nothing was changed"), "\(refused.combined)")
        #expect(!FileManager.default.fileExists(atPath: restored))

        let done = try cli.run(["store", "restore", backup, "--database", restored, "--replacing", cli.database])
        #expect(done.status == 0, "\(done.combined)")
        let copy = cli.directory.file("copy.sqlite")
        let copied = try ProcessRunner.run(PinsetCLI.binary, ["store", "copy", "--from", restored, "--to", copy])
        #expect(copied.status == 0, "\(copied.combined)")
        let stored = try ProcessRunner.run("sqlite3", [copy, "SELECT signers_not_before FROM default_signing_identity"]).stdoutText
        #expect(floor != nil && stored == "\(floor ?? 0)\n", "\(stored)")
    }
}
