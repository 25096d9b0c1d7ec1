import PinsetCore
import PinsetStore
import Testing

@Suite struct AuditLogTests {
    @Test(arguments: StoreBackend.allCases) func everyChangeIsAuditedWithActorDetailsAndVersion(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        let pin = try Sample.hashPin(7)
        try store.addCustomer(acme, actor: "alice")
        try store.addHost(api, port: 443, to: acme, actor: "bob")
        try store.updateHost(api, of: acme, includeSubdomains: true, actor: "bob")
        try store.addPins([pin, try Sample.hashPin(8)], to: api, of: acme, actor: "carol")
        try store.removePin(pin.spkiSHA256!, from: api, of: acme, actor: "carol")
        try store.removeHost(api, from: acme, allowRemovingLastHost: true, actor: "dave")
        try store.removeCustomer(acme, actor: "erin")

        let entries = try store.auditLog(customer: acme)
        #expect(entries.map(\.action) == [.customerRemoved, .hostRemoved, .pinRemoved, .pinsAdded, .hostUpdated, .hostAdded, .customerAdded])
        #expect(entries.map(\.actor) == ["erin", "dave", "carol", "carol", "bob", "bob", "alice"])
        let first = StoreFixture.firstVersion
        #expect(entries.map(\.version) == [0, first + 5, first + 4, first + 3, first + 2, first + 1, first])
        #expect(entries.allSatisfy { $0.customer == "acme" })
        #expect(entries.map(\.id) == entries.map(\.id).sorted(by: >))

        #expect(entries[1].details.contains("api.example.com") && entries[1].details.contains("1 pin"))
        #expect(entries[2].details.contains(pin.spkiSHA256!.base64))
        #expect(entries[3].details.contains(pin.spkiSHA256!.base64) && entries[3].details.contains("added 2 pin"))
        #expect(entries[4].details.contains("include-subdomains off -> on"))
        #expect(entries[0].details.contains("version \(first + 5)"))
    }

    @Test(arguments: StoreBackend.allCases) func logIsFilteredByCustomerAndLimited(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try fixture.store.addCustomer(try Sample.customer("other"), actor: Sample.actor)
        try fixture.store.addHost(try Sample.host("a.example.com"), to: try Sample.customer("other"), actor: Sample.actor)

        #expect(try fixture.store.auditLog().count == 3)
        #expect(try fixture.store.auditLog(limit: 1).map(\.action) == [.hostAdded])
        #expect(try fixture.store.auditLog(customer: try Sample.customer("ACME")).map(\.customer) == ["acme"])
    }

    @Test(arguments: StoreBackend.allCases) func failedChangesAreNotAudited(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        #expect(throws: StoreError(.customerExists, "")) {
            try fixture.store.addCustomer(try Sample.customer("acme"), actor: "mallory")
        }
        #expect(try fixture.store.auditLog().map(\.actor) == [Sample.actor])
    }

    @Test(arguments: StoreBackend.allCases) func anEmptyActorIsRefused(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.addCustomer(try Sample.customer("acme"), actor: "  ")
        }
        #expect(try fixture.store.customers().isEmpty)
    }
}
