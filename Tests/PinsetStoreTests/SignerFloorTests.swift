import PinsetCore
import PinsetStore
import Testing

/// The revocation floor kept per signing identity: carried by the pin sets that identity signs, raised only,
/// and a content change for exactly those customers.
@Suite struct SignerFloorTests {
    func fixture(_ backend: StoreBackend) throws -> (StoreFixture, acme: CustomerName, other: CustomerName, own: CustomerName) {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), other = try Sample.customer("other"), own = try Sample.customer("own")
        for name in [acme, other, own] { try fixture.store.addCustomer(name, actor: Sample.actor) }
        try fixture.store.setOwnSigningIdentity(of: own, OwnSigningIdentityRecord(keyType: "p256", details: "test key"), actor: Sample.actor)
        return (fixture, acme, other, own)
    }

    func floors(_ store: PinStore) throws -> [String: Int64?] {
        Dictionary(uniqueKeysWithValues: try store.allPinSets().map { ($0.customer.rawValue, $0.signersNotBefore) })
    }

    func versions(_ store: PinStore) throws -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: try store.allPinSets().map { ($0.customer.rawValue, $0.version) })
    }

    @Test(arguments: StoreBackend.allCases) func theDefaultFloorReachesEveryDefaultCustomerAndBumpsOnlyThem(_ backend: StoreBackend) throws {
        let (fixture, acme, other, own) = try fixture(backend)
        let store = fixture.store
        #expect(try floors(store) == ["acme": nil, "other": nil, "own": nil])
        let before = try versions(store)
        let raised = try store.raiseSignersNotBefore(to: 1_800_000_000, for: nil, details: "test", actor: Sample.actor)
        let changed = raised.customers
        #expect(changed == [acme, other])
        #expect(raised.previousFloor == nil, "the first floor of the identity")
        #expect(try floors(store) == ["acme": 1_800_000_000, "other": 1_800_000_000, "own": nil])
        let after = try versions(store)
        #expect(after["acme"]! > before["acme"]! && after["other"]! > before["other"]!)
        #expect(after["own"] == before["own"])
        #expect(try store.auditLog(customer: acme, limit: 1).first?.action == .signerFloorRaised)
        #expect(try store.signersNotBefore(of: nil) == 1_800_000_000)

        // The customer's own identity has a floor of its own, which its pin set carries instead.
        #expect(try store.raiseSignersNotBefore(to: 1_700_000_000, for: own, details: "test", actor: Sample.actor).customers == [own])
        #expect(try floors(store) == ["acme": 1_800_000_000, "other": 1_800_000_000, "own": 1_700_000_000])
        #expect(try store.pinSet(for: own)?.signersNotBefore == 1_700_000_000)
        // Another instance on the same database sees the same floors.
        #expect(try floors(try fixture.openAnother()) == floors(store))
    }

    @Test(arguments: StoreBackend.allCases) func aFloorIsNeverLoweredAndRefusalsChangeNothing(_ backend: StoreBackend) throws {
        let (fixture, acme, _, _) = try fixture(backend)
        let store = fixture.store
        try store.raiseSignersNotBefore(to: 1_800_000_000, for: nil, details: "test", actor: Sample.actor)
        let before = try dump(store)
        #expect(throws: StoreError(.revocationFloorRefused, "")) {
            try store.raiseSignersNotBefore(to: 1_799_999_999, for: nil, details: "test", actor: Sample.actor)
        }
        #expect(throws: StoreError(.invalidInput, "")) {
            try store.raiseSignersNotBefore(to: -1, for: nil, details: "test", actor: Sample.actor)
        }
        // A customer signed by the default identity has no floor of its own to set.
        #expect(throws: StoreError(.revocationFloorRefused, "")) {
            try store.raiseSignersNotBefore(to: 1_900_000_000, for: acme, details: "test", actor: Sample.actor)
        }
        #expect(throws: StoreError(.customerNotFound, "")) {
            try store.raiseSignersNotBefore(to: 1_900_000_000, for: try Sample.customer("nobody"), details: "test", actor: Sample.actor)
        }
        // Setting the same floor again is no change at all.
        let same = try store.raiseSignersNotBefore(to: 1_800_000_000, for: nil, details: "test", actor: Sample.actor)
        #expect(same.customers.isEmpty)
        #expect(same.previousFloor == 1_800_000_000)
        #expect(try dump(store) == before)
        // Raising it further is.
        let further = try store.raiseSignersNotBefore(to: 1_800_000_100, for: nil, details: "test", actor: Sample.actor)
        #expect(further.customers.count == 2)
        #expect(further.previousFloor == 1_800_000_000)
    }

    @Test(arguments: StoreBackend.allCases) func replacingAnOwnIdentityKeepsItsFloor(_ backend: StoreBackend) throws {
        let (fixture, _, _, own) = try fixture(backend)
        let store = fixture.store
        try store.raiseSignersNotBefore(to: 1_700_000_000, for: own, details: "test", actor: Sample.actor)
        try store.setOwnSigningIdentity(of: own, OwnSigningIdentityRecord(keyType: "p384", details: "rotated"), actor: Sample.actor)
        #expect(try store.pinSet(for: own)?.signersNotBefore == 1_700_000_000, "a rotation must not lower the floor")
    }
}
