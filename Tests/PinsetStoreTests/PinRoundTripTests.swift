import Foundation
import PinsetCore
import PinsetStore
import Testing

@Suite struct PinRoundTripTests {
    @Test(arguments: StoreBackend.allCases) func pinsWithAndWithoutKeyMaterialComeBackAsStored(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, port: 8443, includeSubdomains: true, to: acme, actor: Sample.actor)
        let chain = try Sample.certificateChainPins()
        let keyOnly = try Sample.publicKeyPin()
        let hashOnly = try Sample.hashPin(0x42, label: "pin from a colleague")
        try fixture.store.addPins(chain + [keyOnly, hashOnly], to: api, of: acme, actor: Sample.actor)

        let pinSet = try #require(try fixture.store.pinSet(for: acme))
        #expect(pinSet.customer == acme)
        #expect(pinSet.hosts.count == 1)
        let host = pinSet.hosts[0]
        #expect(host.hostname == api && host.port == 8443 && host.includeSubdomains)
        // Certificate validity times are whole seconds, which is what the store keeps.
        let expected = (chain + [keyOnly, hashOnly]).sorted { $0.spkiSHA256! < $1.spkiSHA256! }
        #expect(host.pins == expected)
        #expect(chain.allSatisfy { $0.notAfter != nil && $0.certificateSHA256 != nil && $0.subjectPublicKeyInfo != nil })

        let stored = Dictionary(uniqueKeysWithValues: host.pins.map { ($0.spkiSHA256, $0) })
        #expect(stored[hashOnly.spkiSHA256]?.subjectPublicKeyInfo == nil)
        #expect(stored[hashOnly.spkiSHA256]?.certificateSHA256 == nil)
        #expect(stored[hashOnly.spkiSHA256]?.notAfter == nil)
        #expect(stored[hashOnly.spkiSHA256]?.label == "pin from a colleague")
        #expect(stored[keyOnly.spkiSHA256]?.source == PinSource(kind: .publicKey, detail: "backup.pub"))
        #expect(stored[keyOnly.spkiSHA256]?.certificateSHA256 == nil)
    }

    @Test(arguments: StoreBackend.allCases) func notAfterIsKeptToTheSecond(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        var pin = try Sample.hashPin(1)
        pin.notAfter = Date(timeIntervalSince1970: 1_900_000_000.75)
        try fixture.store.addPins([pin], to: api, of: acme, actor: Sample.actor)

        let stored = try #require(try fixture.store.pinSet(for: acme)?.hosts.first?.pins.first)
        #expect(stored.notAfter == Date(timeIntervalSince1970: 1_900_000_000))
    }

    @Test(arguments: StoreBackend.allCases) func hostsAreSortedByNameAndPinsByHash(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        for name in ["www.example.com", "api.example.com", "cdn.example.com"] {
            try fixture.store.addHost(try Sample.host(name), to: acme, actor: Sample.actor)
        }
        let api = try Sample.host("api.example.com")
        try fixture.store.addPins([try Sample.hashPin(9), try Sample.hashPin(3), try Sample.hashPin(200)], to: api, of: acme, actor: Sample.actor)

        let pinSet = try #require(try fixture.store.pinSet(for: acme))
        #expect(pinSet.hosts.map(\.hostname.rawValue) == ["api.example.com", "cdn.example.com", "www.example.com"])
        #expect(pinSet.hosts[0].pins.map { $0.spkiSHA256!.bytes[0] } == [3, 9, 200])
        #expect(pinSet.hosts[1].pins.isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func lookupIgnoresCaseAndReturnsTheStoredName(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try fixture.store.addCustomer(try Sample.customer("Acme"), actor: Sample.actor)
        let found = try #require(try fixture.store.pinSet(for: try Sample.customer("ACME")))
        #expect(found.customer.rawValue == "Acme")
        #expect(try fixture.store.pinSet(for: try Sample.customer("other")) == nil)
    }

    @Test(arguments: StoreBackend.allCases) func addPinsSkipsPinsAlreadyPresentAndReportsTheCount(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        let first = try fixture.store.addPins([try Sample.hashPin(1)], to: api, of: acme, actor: Sample.actor)
        #expect(first.pinCount == 1 && first.lacksBackupPin)

        let second = try fixture.store.addPins([try Sample.hashPin(1), try Sample.hashPin(2), try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor)
        #expect(second.changed == [try Sample.hashPin(2).spkiSHA256])
        #expect(second.skipped == [try Sample.hashPin(1).spkiSHA256, try Sample.hashPin(2).spkiSHA256])
        #expect(second.pinCount == 2 && !second.lacksBackupPin)

        let removed = try fixture.store.removePin(try Sample.hashPin(1).spkiSHA256!, from: api, of: acme, actor: Sample.actor)
        #expect(removed.pinCount == 1 && removed.lacksBackupPin)
    }

    @Test(arguments: StoreBackend.allCases) func removingTheLastPinWithTheFlagLeavesAnEmptyHost(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addPins([try Sample.hashPin(1)], to: api, of: acme, actor: Sample.actor)

        let change = try fixture.store.removePin(try Sample.hashPin(1).spkiSHA256!, from: api, of: acme, allowRemovingLastPin: true, actor: Sample.actor)
        #expect(change.pinCount == 0)
        #expect(try fixture.store.pinSet(for: acme)?.hosts.first?.pins == [])
    }

    @Test(arguments: StoreBackend.allCases) func updateHostChangesOnlyWhatIsGiven(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, port: 443, includeSubdomains: false, to: acme, actor: Sample.actor)

        #expect(try fixture.store.updateHost(api, of: acme, includeSubdomains: true, actor: Sample.actor))
        var host = try #require(try fixture.store.pinSet(for: acme)?.hosts.first)
        #expect(host.port == 443 && host.includeSubdomains)

        #expect(try fixture.store.updateHost(api, of: acme, port: 8443, actor: Sample.actor))
        host = try #require(try fixture.store.pinSet(for: acme)?.hosts.first)
        #expect(host.port == 8443 && host.includeSubdomains)
    }
}
