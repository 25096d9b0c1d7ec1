import PinsetCore
import PinsetStore
import Testing

@Suite struct AllPinSetsTests {
    @Test(arguments: StoreBackend.allCases) func thousandCustomersLoadWithTheirOwnHostsAndPins(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let chain = try Sample.certificateChainPins()
        var expected: [PinSet] = []
        for number in 0..<1_000 {
            let name = try CustomerName(String(format: "customer-%04d", number))
            try store.addCustomer(name, actor: Sample.actor)
            var hosts: [HostPins] = []
            for hostNumber in 0..<(number % 3) {
                let hostname = try Hostname("h\(hostNumber).c\(number).example.com")
                let includeSubdomains = hostNumber == 1
                try store.addHost(hostname, port: UInt16(443 + hostNumber), includeSubdomains: includeSubdomains, to: name, actor: Sample.actor)
                // Distinct per customer and host, so a pin attached to the wrong host would show.
                var pins = [try Sample.hashPin(UInt8(number % 256), label: "c\(number)")]
                pins[0].spkiSHA256 = try SHA256Fingerprint(bytes: [UInt8(number / 256), UInt8(number % 256), UInt8(hostNumber)] + [UInt8](repeating: 0, count: 29))
                if number % 10 == 0 { pins += chain }
                try store.addPins(pins, to: hostname, of: name, actor: Sample.actor)
                hosts.append(HostPins(hostname: hostname, port: UInt16(443 + hostNumber), includeSubdomains: includeSubdomains,
                                      pins: pins.sorted { $0.spkiSHA256! < $1.spkiSHA256! }))
            }
            // The fixture's clock stands still: the first version is its time, then each change adds one.
            let version = StoreFixture.firstVersion + Int64(2 * hosts.count)
            expected.append(PinSet(customer: name, version: version, hosts: hosts.sorted { $0.hostname < $1.hostname }))
        }

        let all = try store.allPinSets()
        #expect(all.count == 1_000)
        #expect(all == expected)
        #expect(try store.pinSet(for: try CustomerName("customer-0500")) == expected[500])
    }
}
