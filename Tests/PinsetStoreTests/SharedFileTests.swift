import Dispatch
import Foundation
import PinsetCore
import PinsetMigrations
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// The server and the CLI are separate processes with separate connection pools on one file.
@Suite struct SharedFileTests {
    @Test(arguments: StoreBackend.allCases) func aWriteInOneStoreIsSeenByAnother(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let server = try fixture.openAnother()
        let counter = try server.changeCounter()
        #expect(try server.pinSet(for: try Sample.customer("acme")) == nil)

        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)

        #expect(try server.changeCounter() == counter + 1)
        #expect(try server.pinSet(for: try Sample.customer("acme"))?.version == StoreFixture.firstVersion)
    }

    @Test(arguments: StoreBackend.allCases) func concurrentWritersInTwoStoresAllSucceed(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let stores = [fixture.store, try fixture.openAnother()]
        let perStore = 40
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            for number in 0..<perStore {
                do {
                    let name = try CustomerName("c\(index)-\(number)")
                    try stores[index].addCustomer(name, actor: "writer\(index)")
                    try stores[index].addHost(try Hostname("h\(number).example.com"), to: name, actor: "writer\(index)")
                } catch {
                    failures.append("\(index)/\(number): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty)
        #expect(try fixture.store.customers().count == stores.count * perStore)
        #expect(try fixture.store.changeCounter() == Int64(stores.count * perStore * 2))
    }

    /// A write that arrives while another connection holds the write lock waits (busy timeout) instead of
    /// failing with SQLITE_BUSY.
    @Test func aWriterWaitsForAnotherStoresTransaction() throws {
        let fixture = try StoreFixture()
        let other = try fixture.openAnother()
        let lockTaken = DispatchSemaphore(value: 0)
        let waiterDone = DispatchSemaphore(value: 0)
        let result = FailureList()
        DispatchQueue.global().async {
            lockTaken.wait()
            do {
                try other.addCustomer(try CustomerName("waiter"), actor: Sample.actor)
            } catch {
                result.append("\(error)")
            }
            waiterDone.signal()
        }
        try fixture.store.pool.write { db in
            try db.execute(sql: "UPDATE change_counter SET value = value + 1")
            lockTaken.signal()
            // Hold the write lock while the other store tries to write.
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(waiterDone.wait(timeout: .now() + 30) == .success)
        #expect(result.all.isEmpty)
        #expect(try fixture.store.changeCounter() == 2)
    }

    @Test func twoStoresCreatingTheSameNewFileBothSucceed() throws {
        let directory = try TemporaryDirectory(prefix: "pinset-store")
        defer { directory.remove() }
        let path = directory.file("new.sqlite")
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                _ = try PinStore(path: path)
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(failures.all.isEmpty)
        #expect(try PinStore(path: path).appliedMigrations() == SchemaMigrations.sqlite.map(\.identifier))
    }
}
