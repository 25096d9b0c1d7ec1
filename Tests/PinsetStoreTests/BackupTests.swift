import Foundation
import PinsetCore
@testable import PinsetStore
import Testing

@Suite struct BackupTests {
    @Test func backupOpensPassesIntegrityCheckAndHasTheSameContent() throws {
        let fixture = try StoreFixture()
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addPins(try Sample.certificateChainPins(), to: api, of: acme, actor: Sample.actor)
        #expect(try fixture.store.integrityCheck() == ["ok"])

        let target = fixture.directory.file("backup.sqlite")
        try fixture.store.backup(to: target)

        // A single self-contained file in rollback-journal mode (header bytes 18 and 19 are 1), nothing left over.
        let header = try #require(FileManager.default.contents(atPath: target)).prefix(20)
        #expect(Array(header.prefix(16)) == Array("SQLite format 3\0".utf8))
        #expect(header[header.startIndex + 18] == 1 && header[header.startIndex + 19] == 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.contains("partial") || $0.hasPrefix("backup.sqlite-") }
        #expect(leftovers.isEmpty)
        #expect(try permissions(of: target) & 0o007 == 0)

        let copy = try PinStore.open(path: target, readOnly: true)
        #expect(try copy.integrityCheck() == ["ok"])
        #expect(try dump(copy) == dump(fixture.store))
        #expect(try copy.allPinSets() == fixture.store.allPinSets())
    }

    @Test func backupReplacesAnOlderBackup() throws {
        let fixture = try StoreFixture()
        let target = fixture.directory.file("backup.sqlite")
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try fixture.store.backup(to: target)
        try fixture.store.addCustomer(try Sample.customer("other"), actor: Sample.actor)
        try fixture.store.backup(to: target)

        #expect(try PinStore.open(path: target, readOnly: true).customers().map(\.name.rawValue) == ["acme", "other"])
    }

    @Test func backupOntoTheDatabaseItselfIsRefused() throws {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        let error = #expect(throws: StoreError.self) { try fixture.store.backup(to: fixture.path) }
        #expect(error?.code == .invalidInput)
        #expect(try fixture.store.integrityCheck() == ["ok"])
        #expect(try fixture.store.customers().count == 1)
    }
}

func permissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
