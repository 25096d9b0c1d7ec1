import PinsetTestSupport
import PinsetCore
import PinsetStore
import Testing

@Suite struct ContentVersionTests {
    /// Runs `change` and returns by how much it moved each customer's version and the change counter.
    private func deltas(_ store: PinStore, _ change: () throws -> Void) throws -> (acme: Int64, other: Int64, counter: Int64) {
        func version(_ name: String) throws -> Int64 { try store.pinSet(for: try Sample.customer(name))?.version ?? 0 }
        let acme = try version("acme"), other = try version("other"), counter = try store.changeCounter()
        try change()
        return (try version("acme") - acme, try version("other") - other, try store.changeCounter() - counter)
    }

    @Test(arguments: StoreBackend.allCases) func everyKindOfChangeBumpsOnlyTheAffectedCustomerAndTheCounter(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(try Sample.customer("other"), actor: Sample.actor)
        try store.addCustomer(acme, actor: Sample.actor)
        #expect(try store.pinSet(for: acme)?.version == StoreFixture.firstVersion)

        let changes: [(String, () throws -> Void)] = [
            ("add host", { try store.addHost(api, to: acme, actor: Sample.actor) }),
            ("update host", { try store.updateHost(api, of: acme, port: 8443, actor: Sample.actor) }),
            ("add pins", { try store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor) }),
            ("remove pin", { try store.removePin(try Sample.hashPin(1).spkiSHA256!, from: api, of: acme, actor: Sample.actor) }),
            ("remove host", { try store.removeHost(api, from: acme, allowRemovingLastHost: true, actor: Sample.actor) }),
        ]
        for (label, change) in changes {
            let moved = try deltas(store, change)
            #expect(moved.acme == 1, "\(label) must bump acme's version by one")
            #expect(moved.other == 0, "\(label) must not touch another customer's version")
            #expect(moved.counter == 1, "\(label) must bump the change counter by one")
        }
        // The clock stood still, so each change stepped by one.
        #expect(try store.pinSet(for: acme)?.version == StoreFixture.firstVersion + 5)
    }

    @Test(arguments: StoreBackend.allCases) func addingAndRemovingCustomersBumpsTheCounter(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        #expect(try fixture.store.changeCounter() == 0)
        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        #expect(try fixture.store.changeCounter() == 1)
        try fixture.store.removeCustomer(try Sample.customer("acme"), actor: Sample.actor)
        #expect(try fixture.store.changeCounter() == 2)
    }

    /// A new signer certificate re-signs the same pins: every customer of the identity is audited and servers
    /// are told (the counter), but no version moves, so a bundle an instance signed before it switched is no
    /// rollback for a client that already has one signed after.
    @Test(arguments: StoreBackend.allCases) func installingASignerCertificateAuditsButKeepsTheVersions(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        try store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        try store.addCustomer(try Sample.customer("other"), actor: Sample.actor)
        var resigned: [CustomerName] = []
        let moved = try deltas(store) {
            resigned = try store.recordSignerCertificateInstalled(for: nil, details: "signer 2", actor: Sample.actor)
        }
        #expect(resigned == [try Sample.customer("acme"), try Sample.customer("other")])
        #expect(moved.acme == 0 && moved.other == 0, "no content version moves")
        #expect(moved.counter > 0, "running servers are told to re-sign")
        let entries = try store.auditLog().filter { $0.action == .signerCertificateInstalled }
        #expect(entries.map(\.customer).sorted() == ["acme", "other"])
        #expect(entries.allSatisfy { $0.version == StoreFixture.firstVersion && $0.details.contains("signer 2") })
    }

    @Test(arguments: StoreBackend.allCases) func updateWithoutDifferenceChangesNothing(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, port: 443, to: acme, actor: Sample.actor)
        let before = try dump(fixture.store)
        #expect(try fixture.store.updateHost(api, of: acme, port: 443, includeSubdomains: false, actor: Sample.actor) == false)
        #expect(try dump(fixture.store) == before)
    }

    /// Rollback attack: a client that saw the removed customer's version N must accept the re-added
    /// customer's bundles, and an old bundle of version ≤ N must not outrank them.
    @Test(arguments: StoreBackend.allCases) func reAddedCustomerStartsAboveEveryVersionTheOldOneHad(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addPins([try Sample.hashPin(1)], to: api, of: acme, actor: Sample.actor)
        let last = try #require(try fixture.store.pinSet(for: acme)?.version)
        #expect(last == StoreFixture.firstVersion + 2)

        try fixture.store.removeCustomer(acme, actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme) == nil)
        // Re-added with another spelling: names are one identity ignoring case.
        try fixture.store.addCustomer(try Sample.customer("ACME"), actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme)?.version == last + 1)

        // The high-water mark survives reopening the file.
        try fixture.store.removeCustomer(acme, actor: Sample.actor)
        let reopened = try fixture.openAnother()
        try reopened.addCustomer(acme, actor: Sample.actor)
        #expect(try reopened.pinSet(for: acme)?.version == last + 2)
    }

    /// Versions are at least the time of the change in milliseconds, so a later database starts above an
    /// earlier one.
    @Test(arguments: StoreBackend.allCases) func versionsFollowTheClockWhenItMovesAhead(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        fixture.clock.advance(by: 2.5)
        try fixture.store.addHost(try Sample.host("api.example.com"), to: acme, actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme)?.version == StoreFixture.firstVersion + 2_500)
        // A customer added later starts at the clock, not at 1.
        try fixture.store.addCustomer(try Sample.customer("other"), actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: try Sample.customer("other"))?.version == StoreFixture.firstVersion + 2_500)
    }

    /// A clock set back (NTP step, wrong time zone) must not move a version back.
    @Test(arguments: StoreBackend.allCases) func versionsStillIncreaseWhenTheClockStepsBack(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        fixture.clock.advance(by: -3_600)
        try fixture.store.addHost(try Sample.host("api.example.com"), to: acme, actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme)?.version == StoreFixture.firstVersion + 1)
        try fixture.store.removeCustomer(acme, actor: Sample.actor)
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme)?.version == StoreFixture.firstVersion + 2)
    }

    /// Rollback freeze: apps that hold versions from a database that was lost must accept the first bundle
    /// of a database created again from scratch later.
    @Test(arguments: StoreBackend.allCases) func aRecreatedDatabaseStartsAboveEveryVersionTheOldOneServed(_ backend: StoreBackend) throws {
        let clock = TestClock(StoreFixture.start)
        let old = try StoreFixture(backend, clock: clock)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try old.store.addCustomer(acme, actor: Sample.actor)
        try old.store.addHost(api, to: acme, actor: Sample.actor)
        for byte in UInt8(1)...20 {
            try old.store.addPins([try Sample.hashPin(byte)], to: api, of: acme, actor: Sample.actor)
        }
        let served = try #require(try old.store.pinSet(for: acme)?.version)

        clock.advance(by: 1)
        let recreated = try StoreFixture(backend, clock: clock)
        try recreated.store.addCustomer(acme, actor: Sample.actor)
        let first = try #require(try recreated.store.pinSet(for: acme)?.version)
        #expect(first > served)
        try recreated.store.addHost(api, to: acme, actor: Sample.actor)
        #expect(try #require(try recreated.store.pinSet(for: acme)?.version) > first)
    }

    @Test(arguments: StoreBackend.allCases) func customerSummariesCountHostsAndPins(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme")
        try fixture.store.addCustomer(try Sample.customer("zeta"), actor: Sample.actor)
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(try Sample.host("a.example.com"), to: acme, actor: Sample.actor)
        try fixture.store.addHost(try Sample.host("b.example.com"), to: acme, actor: Sample.actor)
        try fixture.store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: try Sample.host("a.example.com"), of: acme, actor: Sample.actor)
        try fixture.store.addPins([try Sample.hashPin(1)], to: try Sample.host("b.example.com"), of: acme, actor: Sample.actor)

        let summaries = try fixture.store.customers()
        #expect(summaries.map(\.name.rawValue) == ["acme", "zeta"])
        #expect(summaries[0].hostCount == 2 && summaries[0].pinCount == 3 && summaries[0].version == StoreFixture.firstVersion + 4)
        #expect(summaries[1].hostCount == 0 && summaries[1].pinCount == 0 && summaries[1].version == StoreFixture.firstVersion)
        #expect(summaries[0].updatedAt >= summaries[0].createdAt)
    }
}
