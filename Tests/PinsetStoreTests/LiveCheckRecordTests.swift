import PinsetCore
import PinsetStore
import Testing

/// The pin set that passed the live-chain check is the one committed: an edit whose host changed after the
/// check is refused, whatever changed it.
@Suite struct LiveCheckRecordTests {
    @Test(arguments: StoreBackend.allCases) func anEditCheckedAgainstAStaleHostIsRefusedAndChangesNothing(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(api, port: 443, pins: [try Sample.hashPin(1), try Sample.hashPin(2)], to: acme, actor: Sample.actor)
        let checked = try #require(try store.pinSet(for: acme)?.hosts.first)
        let record = LiveCheckRecord(checkedHost: checked, auditNote: "live chain of api.example.com:443 checked: matches")

        // Another edit lands between the check and the write.
        try store.removePin(try #require(try Sample.hashPin(2).spkiSHA256), from: api, of: acme, actor: "bob")
        let before = try store.pinSet(for: acme)
        for attempt in [
            { _ = try store.addPins([try Sample.hashPin(3)], to: api, of: acme, liveCheck: record, actor: Sample.actor) },
            { _ = try store.removePin(try #require(try Sample.hashPin(1).spkiSHA256), from: api, of: acme, allowRemovingLastPin: true, liveCheck: record, actor: Sample.actor) },
            { _ = try store.updateHost(api, of: acme, port: 8443, liveCheck: record, actor: Sample.actor) },
        ] as [() throws -> Void] {
            #expect(throws: StoreError(.changedSinceCheck, "")) { try attempt() }
        }
        #expect(try store.pinSet(for: acme) == before)

        // Checked against the current host, the same edit goes through and the audit entry carries the note.
        let current = try #require(try store.pinSet(for: acme)?.hosts.first)
        try store.addPins([try Sample.hashPin(3)], to: api, of: acme, liveCheck: LiveCheckRecord(checkedHost: current, auditNote: "live chain checked: matches"), actor: Sample.actor)
        #expect(try store.auditLog(customer: acme, limit: 1).first?.details.hasSuffix("; live chain checked: matches") == true)
    }

    @Test(arguments: StoreBackend.allCases) func unmonitoredHostsAreListedWithTheirReasonAndAudited(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(api, to: acme, actor: Sample.actor)
        let version = try store.pinSet(for: acme)?.version
        #expect(try store.setUnmonitored(api, of: acme, reason: "  internal only ", actor: Sample.actor))
        #expect(try !store.setUnmonitored(api, of: acme, reason: "internal only", actor: Sample.actor))
        #expect(try store.unmonitoredHosts() == [UnmonitoredHost(customer: acme, hostname: api, reason: "internal only")])
        #expect(try store.pinSet(for: acme)?.version == version, "the bundle does not change")
        #expect(throws: StoreError(.invalidInput, "")) { try store.setUnmonitored(api, of: acme, reason: " ", actor: Sample.actor) }
        #expect(try store.setUnmonitored(api, of: acme, reason: nil, actor: Sample.actor))
        #expect(try store.unmonitoredHosts(of: acme).isEmpty)
        #expect(try store.auditLog(customer: acme, limit: 2).map(\.details) == [
            "api.example.com: monitored again (live-chain checks on)",
            "api.example.com: unmonitored (live-chain checks skipped): internal only",
        ])
    }
}
