import PinsetCore
import PinsetStore
import Testing

@Suite struct AllPinSetsTests {
    @Test(arguments: StoreBackend.allCases) func thousandCustomersLoadWithTheirOwnHostsAndPins(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let chain = try Sample.certificateChainPins()
        var imports: [CustomerImport] = []
        var expected: [PinSet] = []
        for number in 0..<1_000 {
            let name = try CustomerName(String(format: "customer-%04d", number))
            var hosts: [HostPins] = []
            for hostNumber in 0..<(number % 3) {
                let hostname = try Hostname("h\(hostNumber).c\(number).example.com")
                // Distinct per customer and host, so a pin attached to the wrong host would show.
                var pins = [try Sample.hashPin(UInt8(number % 256), label: "c\(number)")]
                pins[0].spkiSHA256 = try SHA256Fingerprint(bytes: [UInt8(number / 256), UInt8(number % 256), UInt8(hostNumber)] + [UInt8](repeating: 0, count: 29))
                if number % 10 == 0 { pins += chain }
                hosts.append(HostPins(hostname: hostname, port: UInt16(443 + hostNumber), includeSubdomains: hostNumber == 1, pins: pins))
            }
            imports.append(CustomerImport(name: name, hosts: hosts, ownSigningIdentity: nil, origin: "test"))
            let sortedHosts = hosts.map { host in
                var host = host
                host.pins.sort { $0.spkiSHA256! < $1.spkiSHA256! }
                return host
            }
            // The fixture's clock stands still: every customer created at once gets its time as the first version.
            expected.append(PinSet(customer: name, version: StoreFixture.firstVersion, hosts: sortedHosts.sorted { $0.hostname < $1.hostname }))
        }
        // One transaction: what is under test is reading a thousand customers back, not writing them one by one
        // (the suites below and ContentVersionTests cover each kind of write).
        try store.importCustomers(imports, actor: Sample.actor)

        let all = try store.allPinSets()
        #expect(all.count == 1_000)
        #expect(all == expected)
        #expect(try store.pinSet(for: try CustomerName("customer-0500")) == expected[500])
    }
}

@Suite struct UpdatingPinSetsTests {
    /// After each kind of write, an update of the pin sets read before it equals a full read.
    @Test(arguments: StoreBackend.allCases) func anUpdateAfterEveryKindOfWriteEqualsAFullRead(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let names = try (0..<300).map { try CustomerName(String(format: "customer-%03d", $0)) }
        // Created in one transaction; the writes under test come one by one below.
        try store.importCustomers(try names.map { name in
            CustomerImport(name: name, hosts: [HostPins(hostname: try Hostname("api.\(name).example.com"), port: 443, includeSubdomains: false,
                                                         pins: [try Sample.hashPin(1), try Sample.hashPin(2)])],
                           ownSigningIdentity: nil, origin: "test")
        }, actor: Sample.actor)
        var previous = try store.allPinSets()
        let acme = names[7]
        let host = try Hostname("api.\(acme).example.com")
        let writes: [(String, () throws -> Void)] = [
            ("add a host", { try store.addHost(try Hostname("www.\(acme).example.com"), pins: [try Sample.hashPin(3)], to: acme, actor: Sample.actor) }),
            ("add a pin", { _ = try store.addPins([try Sample.hashPin(4)], to: host, of: acme, actor: Sample.actor) }),
            ("remove a pin", { _ = try store.removePin(try Sample.hashPin(1).spkiSHA256!, from: host, of: acme, actor: Sample.actor) }),
            ("change a host", { _ = try store.updateHost(host, of: acme, port: 8443, includeSubdomains: true, actor: Sample.actor) }),
            ("serve legacy clients", { _ = try store.setServesLegacyClients(true, for: names[8], actor: Sample.actor) }),
            ("an own identity", { try store.setOwnSigningIdentity(of: names[9], OwnSigningIdentityRecord(keyType: "p256", details: "test key"), actor: Sample.actor) }),
            ("a new own identity", { try store.setOwnSigningIdentity(of: names[9], OwnSigningIdentityRecord(keyType: "rsa4096", details: "rotated"), actor: Sample.actor) }),
            // The counter moves but no version: every customer is kept.
            ("a new signer certificate", { _ = try store.recordSignerCertificateInstalled(for: nil, details: "test", actor: Sample.actor) }),
            ("an own floor", { _ = try store.raiseSignersNotBefore(to: 1_700_000_000, for: names[9], details: "test", actor: Sample.actor) }),
            ("remove a customer", { try store.removeCustomer(names[10], actor: Sample.actor) }),
            ("add a customer", { try store.addCustomer(try CustomerName("customer-150a"), actor: Sample.actor) }),
            ("re-add a customer", {
                try store.addCustomer(names[10], actor: Sample.actor)
                try store.addHost(try Hostname("new.\(names[10]).example.com"), pins: [try Sample.hashPin(5)], to: names[10], actor: Sample.actor)
            }),
            // Changes every default-signed customer: more than are re-read one by one.
            ("the default floor", { _ = try store.raiseSignersNotBefore(to: 1_700_000_000, for: nil, details: "test", actor: Sample.actor) }),
        ]
        for (write, perform) in writes {
            try perform()
            let updated = try store.allPinSets(updating: previous)
            #expect(updated == (try store.allPinSets()), "after: \(write)")
            previous = updated
        }
    }

    /// Hosts and pins are read again only for customers whose version changed: content planted in `previous`
    /// for an unchanged customer is kept, so an edit costs a read of one customer.
    @Test(arguments: StoreBackend.allCases) func onlyChangedCustomersAreReadAgain(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let (acme, other) = (try CustomerName("acme"), try CustomerName("other"))
        for name in [acme, other] {
            try store.addCustomer(name, actor: Sample.actor)
            try store.addHost(try Hostname("api.\(name).example.com"), pins: [try Sample.hashPin(1)], to: name, actor: Sample.actor)
        }
        var planted = try store.allPinSets()
        planted[1].hosts = []
        #expect(try store.allPinSets(updating: planted) == planted)

        _ = try store.addPins([try Sample.hashPin(2)], to: try Hostname("api.acme.example.com"), of: acme, actor: Sample.actor)
        let updated = try store.allPinSets(updating: planted)
        #expect(updated[0] == (try store.pinSet(for: acme)))
        #expect(updated[0].hosts[0].pins.count == 2)
        #expect(updated[1].customer == other && updated[1].hosts.isEmpty)
    }

    /// Changes since headers read earlier list every customer's header, and carry the hosts and pins of the
    /// changed customers only; a setting that is not content (legacy clients) shows in the header alone.
    @Test(arguments: StoreBackend.allCases) func changesCarryThePinSetsOfChangedCustomersOnly(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let (acme, other) = (try CustomerName("acme"), try CustomerName("other"))
        for name in [acme, other] {
            try store.addCustomer(name, actor: Sample.actor)
            try store.addHost(try Hostname("api.\(name).example.com"), pins: [try Sample.hashPin(1)], to: name, actor: Sample.actor)
        }
        let headers = try store.allPinSets().map(\.header)
        #expect(try store.pinSetChanges(since: headers) == PinSetChanges(headers: headers, pinSets: []))

        _ = try store.addPins([try Sample.hashPin(2)], to: try Hostname("api.acme.example.com"), of: acme, actor: Sample.actor)
        let changes = try store.pinSetChanges(since: headers)
        #expect(changes.headers == (try store.allPinSets().map(\.header)))
        #expect(changes.pinSets == [try #require(try store.pinSet(for: acme))])

        _ = try store.setServesLegacyClients(true, for: other, actor: Sample.actor)
        let legacy = try store.pinSetChanges(since: changes.headers)
        #expect(legacy.pinSets.isEmpty)
        #expect(legacy.headers.map(\.servesLegacyClients) == [false, true])
    }
}
