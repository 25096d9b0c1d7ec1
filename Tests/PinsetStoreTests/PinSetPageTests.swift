import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// A full signing pass reads the deployment page by page: every customer exactly once, with its hosts and pins.
@Suite struct PinSetPageTests {
    private static func add(_ count: Int, to store: PinStore, startingAt first: Int = 1) throws {
        for index in first..<(first + count) {
            let customer = try NumberedCustomers.name(index), host = try NumberedCustomers.hostname(index)
            try store.addCustomer(customer, actor: "test")
            try store.addHost(host, to: customer, actor: "test")
            try store.addPins([NumberedCustomers.pin(index)], to: host, of: customer, actor: "test")
        }
    }

    private static func allPages(of store: PinStore, limit: Int) throws -> [PinSetPage] {
        var pages = [try store.pinSetPage(after: nil, limit: limit)]
        while let next = pages.last?.next, pages.count < 100 {
            pages.append(try store.pinSetPage(after: next, limit: limit))
        }
        return pages
    }

    @Test(arguments: StoreBackend.allCases)
    func pagesHoldEveryCustomerOnceWithItsContent(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try Self.add(7, to: fixture.store)
        // The last customer's pins are edited after the others were added: its rows no longer follow its host's.
        try fixture.store.addPins([Pin(spkiSHA256: SHA256Fingerprint(of: Array("backup".utf8)), source: PinSource(kind: .hash))],
                                  to: try Hostname("api.customer-1.example.com"), of: try CustomerName("customer-1"), actor: "test")
        let pages = try Self.allPages(of: fixture.store, limit: 3)
        #expect(pages.map(\.pinSets.count) == [3, 3, 1])
        #expect(pages.last?.next == nil)
        let paged = pages.flatMap(\.pinSets).sorted { $0.customer.rawValue < $1.customer.rawValue }
        #expect(paged == (try fixture.store.allPinSets()))
    }

    @Test(arguments: StoreBackend.allCases)
    func aFullLastPageIsFollowedByAnEmptyOne(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try Self.add(4, to: fixture.store)
        let pages = try Self.allPages(of: fixture.store, limit: 2)
        #expect(pages.map(\.pinSets.count) == [2, 2, 0])
        #expect(try fixture.store.pinSetPage(after: nil, limit: 10).pinSets.count == 4)
    }

    @Test func aPageNeedsALimit() throws {
        let fixture = try StoreFixture()
        #expect(throws: StoreError.self) { try fixture.store.pinSetPage(after: nil, limit: 0) }
    }
}
