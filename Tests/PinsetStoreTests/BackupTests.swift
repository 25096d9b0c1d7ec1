import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

@Suite struct BackupTests {
    @Test func backupOpensPassesIntegrityCheckAndHasTheSameContent() throws {
        let fixture = try StoreFixture()
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addPins(try Sample.certificateChainPins(), to: api, of: acme, actor: Sample.actor)
        #expect(try fixture.store.integrityCheck() == ["ok"])

        let outside = try TemporaryDirectory(prefix: "pinset-backups")
        defer { outside.remove() }
        let target = outside.file("backup.sqlite")
        try fixture.store.backup(to: target)

        // A single self-contained file in rollback-journal mode (header bytes 18 and 19 are 1), nothing left over.
        let header = try #require(FileManager.default.contents(atPath: target)).prefix(20)
        #expect(Array(header.prefix(16)) == Array("SQLite format 3\0".utf8))
        #expect(header[header.startIndex + 18] == 1 && header[header.startIndex + 19] == 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: outside.path).filter { $0.contains("partial") || $0.hasPrefix("backup.sqlite-") }
        #expect(leftovers.isEmpty)
        #expect(try permissions(of: target) & 0o007 == 0)

        let copy = try PinStore.open(path: target, readOnly: true)
        #expect(try copy.integrityCheck() == ["ok"])
        #expect(try dump(copy, excluding: ["backup_marker"]) == dump(fixture.store, excluding: ["backup_marker"]))
        #expect(try copy.allPinSets() == fixture.store.allPinSets())
        // Only the copy is marked as a backup.
        #expect(try copy.database.read(BackupMarker.read) == BackupMarker(takenAt: StoreFixture.start, source: fixture.path))
        #expect(try fixture.store.database.read(BackupMarker.read) == nil)
    }

    @Test func backupReplacesAnOlderBackupOnlyWhenAsked() throws {
        let fixture = try StoreFixture()
        let outside = try TemporaryDirectory(prefix: "pinset-backups")
        defer { outside.remove() }
        let target = outside.file("backup.sqlite")
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try fixture.store.backup(to: target)
        try fixture.store.addCustomer(try Sample.customer("other"), actor: Sample.actor)
        let older = try #require(FileManager.default.contents(atPath: target))

        let error = #expect(throws: StoreError.self) { try fixture.store.backup(to: target) }
        #expect(error?.message.contains("already exists") == true && error?.message.contains("--overwrite") == true)
        #expect(FileManager.default.contents(atPath: target) == older)

        try fixture.store.backup(to: target, replacingExisting: true)
        #expect(try PinStore.open(path: target, readOnly: true).customers().map(\.name.rawValue) == ["acme", "other"])
    }

    /// A backup onto the signing key replaced it with a SQLite file; onto the `-wal` file of a served
    /// database it broke every command. No spelling of a path inside the data directory may get there,
    /// not even with `replacingExisting`.
    @Test func backupNeverWritesIntoTheDataDirectory() throws {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        let dataDirectory = fixture.directory.path
        let key = try fixture.directory.write("signing-key.pem", "-----BEGIN PRIVATE KEY-----\nnot a real key\n-----END PRIVATE KEY-----\n")
        let keyDirectory = try TemporaryDirectory(prefix: "pinset-keys")
        defer { keyDirectory.remove() }
        let separateKey = try keyDirectory.write("signing-key.pem", "separate key\n")
        let outside = try TemporaryDirectory(prefix: "pinset-backups")
        defer { outside.remove() }
        try FileManager.default.createDirectory(atPath: outside.file("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: outside.file("to-key.sqlite"), withDestinationPath: key)
        try FileManager.default.createSymbolicLink(atPath: outside.file("data"), withDestinationPath: dataDirectory)
        let wal = fixture.path + "-wal"
        #expect(FileManager.default.fileExists(atPath: wal))

        let destinations = [
            key, wal, fixture.path + "-shm", fixture.directory.file("new-backup.sqlite"),
            outside.path + "/sub/../../" + URL(fileURLWithPath: dataDirectory).lastPathComponent + "/signing-key.pem",
            outside.file("to-key.sqlite"), outside.file("data") + "/pinset.sqlite-wal", outside.file("data") + "/fresh.sqlite",
            separateKey,
        ]
        let watched = [key, fixture.path, separateKey]
        let before = try watched.map { try #require(FileManager.default.contents(atPath: $0)) }
        let content = try dump(fixture.store)
        for destination in destinations {
            for replacing in [false, true] {
                let error = #expect(throws: StoreError.self, "\(destination)") {
                    try fixture.store.backup(to: destination, replacingExisting: replacing, protectedDirectories: [keyDirectory.path])
                }
                #expect(error?.message.contains("data directory") == true, "\(destination): \(error?.message ?? "")")
                #expect(watched.map { FileManager.default.contents(atPath: $0) } == before, "\(destination) changed a file")
                #expect(try dump(fixture.store) == content)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.file("new-backup.sqlite")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dataDirectory).filter { $0.contains("backup") || $0.contains("partial") }.isEmpty)
        #expect(try fixture.store.integrityCheck() == ["ok"])
    }

    @Test func backupOntoTheDatabaseItselfIsRefused() throws {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        let error = #expect(throws: StoreError.self) { try fixture.store.backup(to: fixture.path, replacingExisting: true) }
        #expect(error?.code == .invalidInput)
        #expect(try fixture.store.integrityCheck() == ["ok"])
        #expect(try fixture.store.customers().count == 1)
    }
}

func permissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
