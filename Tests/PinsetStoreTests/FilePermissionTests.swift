import Foundation
import PinsetStore
import Testing

/// The database names every customer and its infrastructure: it must not be readable by other users.
@Suite struct FilePermissionTests {
    @Test func aNewDatabaseAndItsWALFilesAreNotWorldReadable() throws {
        let fixture = try StoreFixture()
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        for suffix in ["", "-wal", "-shm"] {
            let path = fixture.path + suffix
            #expect(FileManager.default.fileExists(atPath: path), "\(path) should exist while the store is open")
            let mode = try permissions(of: path)
            #expect(mode & 0o007 == 0, "\(path) has mode \(String(mode, radix: 8))")
            #expect(mode & 0o022 == 0, "\(path) has mode \(String(mode, radix: 8))")
        }
    }
}
