#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetFileSystem
import PinsetSigning
import PinsetTestSupport
import Testing

/// Paths another local user owns or can write are refused, as ssh and sudo refuse them. The ownership cases
/// hand files to `nobody`, which needs root (as in CI).
@Suite struct FileTrustTests {
    static let isRoot = geteuid() == 0
    static let nobody: uid_t = getpwnam("nobody")?.pointee.pw_uid ?? 65534

    /// A directory with a written signing identity: key.pem (0600), cert.pem.
    func keyDirectory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let identity = try TestPKI.signingIdentity()
        try identity.write(keyPath: directory.file("key.pem"), certificatePEMPath: directory.file("cert.pem"), certificateDERPath: directory.file("cert.der"))
        return directory
    }

    func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test func loadsAKeyThatPassesEveryCheck() throws {
        let directory = try keyDirectory()
        defer { directory.remove() }
        _ = try SigningIdentity.load(keyPath: directory.file("key.pem"), certificatePath: directory.file("cert.pem"))
    }

    @Test func refusesASymlinkedKey() throws {
        let directory = try keyDirectory()
        defer { directory.remove() }
        #expect(symlink(directory.file("key.pem"), directory.file("link.pem")) == 0)
        let message = refusal { _ = try SigningIdentity.load(keyPath: directory.file("link.pem"), certificatePath: directory.file("cert.pem")) }
        #expect(message?.contains("symbolic link") == true, "\(message ?? "accepted")")
    }

    @Test(.enabled(if: isRoot)) func refusesAKeyOwnedByAnotherUser() throws {
        let directory = try keyDirectory()
        defer { directory.remove() }
        #expect(chown(directory.file("key.pem"), Self.nobody, getegid()) == 0)
        let message = refusal { _ = try SigningIdentity.load(keyPath: directory.file("key.pem"), certificatePath: directory.file("cert.pem")) }
        #expect(message?.contains("owned by 'nobody'") == true, "\(message ?? "accepted")")
        #expect(message?.contains("chown root \(directory.file("key.pem"))") == true, "\(message ?? "accepted")")
    }

    @Test func refusesAKeyInADirectoryOthersCanWrite() throws {
        let directory = try keyDirectory()
        defer { directory.remove() }
        #expect(chmod(directory.path, 0o777) == 0)
        let message = refusal { _ = try SigningIdentity.load(keyPath: directory.file("key.pem"), certificatePath: directory.file("cert.pem")) }
        #expect(message?.contains("chmod 700 \(directory.path)") == true, "\(message ?? "accepted")")
        // The sticky bit (as on /tmp) keeps others from replacing the key: accepted.
        #expect(chmod(directory.path, 0o1777) == 0)
        _ = try SigningIdentity.load(keyPath: directory.file("key.pem"), certificatePath: directory.file("cert.pem"))
    }

    @Test func refusesAFIFOAtTheKeyPathWithoutBlocking() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(mkfifo(directory.file("key.pem"), 0o600) == 0)
        let message = refusal { _ = try PrivateFilePermissions.read(directory.file("key.pem"), limit: 1024) }
        #expect(message?.contains("not a regular file") == true, "\(message ?? "accepted")")
    }

    @Test func dataDirectoryPolicyRefusesWritableOrForeignPaths() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("pinset.sqlite")
        _ = try directory.write("pinset.sqlite", "x", mode: 0o640)
        try DataDirectoryPolicy.check(directory: directory.path, databasePath: database)

        #expect(chmod(directory.path, 0o770) == 0)
        #expect(refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }?.contains("chmod 700") == true)
        #expect(chmod(directory.path, 0o700) == 0)

        #expect(chmod(database, 0o660) == 0)
        #expect(refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }?.contains("chmod go-w \(database)") == true)
        #expect(chmod(database, 0o640) == 0)

        _ = try directory.write("pinset.sqlite-wal", "", mode: 0o600)
        #expect(chmod(directory.file("pinset.sqlite-wal"), 0o666) == 0)
        #expect(refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }?.contains("pinset.sqlite-wal") == true)
    }

    /// SQLite follows a symbolic link to the database and keeps its -wal beside the target, where one planted would be
    /// replayed into the database: a target in a directory others can write is refused, and so is a -wal there.
    @Test func dataDirectoryPolicyChecksWhereASymbolicallyLinkedDatabaseReallyIs() throws {
        let directory = try TemporaryDirectory(), shared = try TemporaryDirectory()
        defer { directory.remove(); shared.remove() }
        let target = try shared.write("pinset.sqlite", "x", mode: 0o640)
        let database = directory.file("pinset.sqlite")
        #expect(symlink(target, database) == 0)
        try DataDirectoryPolicy.check(directory: directory.path, databasePath: database)

        #expect(chmod(shared.path, 0o777) == 0)
        let open = refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }
        #expect(open?.contains(shared.path) == true, "\(open ?? "accepted")")
        #expect(chmod(shared.path, 0o700) == 0)

        _ = try shared.write("pinset.sqlite-wal", "", mode: 0o600)
        #expect(chmod(shared.file("pinset.sqlite-wal"), 0o666) == 0)
        let wal = refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }
        #expect(wal?.contains(shared.file("pinset.sqlite-wal")) == true, "\(wal ?? "accepted")")
    }

    @Test(.enabled(if: isRoot)) func dataDirectoryPolicyRefusesPathsOwnedByAnotherUser() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try directory.write("pinset.sqlite", "x", mode: 0o640)
        #expect(chown(database, Self.nobody, getegid()) == 0)
        #expect(refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }?.contains("chown root") == true)
        #expect(chown(database, 0, 0) == 0)
        _ = try directory.write("pinset.sqlite-shm", "", mode: 0o600)
        #expect(chown(directory.file("pinset.sqlite-shm"), Self.nobody, getegid()) == 0)
        #expect(refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }?.contains("pinset.sqlite-shm") == true)
        #expect(unlink(directory.file("pinset.sqlite-shm")) == 0)
        #expect(chown(directory.path, Self.nobody, getegid()) == 0)
        #expect(refusal { try DataDirectoryPolicy.check(directory: directory.path, databasePath: database) }?.contains("owned by 'nobody'") == true)
    }
}
