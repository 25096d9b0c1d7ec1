import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Publish windows: each pass lists only the pins valid at its time, a pin entering or leaving is a new content
/// version (logged and audited like an edit), and a schedule that would unpin a host is refused when it is made.
@Suite struct PinWindowStoreTests {
    static func window(from start: TimeInterval? = nil, until end: TimeInterval? = nil) throws -> PinWindow {
        try PinWindow(
            notBefore: start.map { StoreFixture.start.addingTimeInterval($0) }, notAfter: end.map { StoreFixture.start.addingTimeInterval($0) })
    }

    static func pin(_ byte: UInt8, _ window: PinWindow? = nil) throws -> Pin {
        var pin = try Sample.hashPin(byte, label: "key \(byte)")
        pin.window = window
        return pin
    }

    @Test(arguments: StoreBackend.allCases) func pinsEnterAndLeaveAtTheirWindowsUnderNewLoggedVersions(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(api, to: acme, actor: Sample.actor)
        let steady = try Self.pin(1), leaving = try Self.pin(2, Self.window(until: 100)), entering = try Self.pin(3, Self.window(from: 50))
        try store.addPins([steady, leaving, entering], to: api, of: acme, actor: Sample.actor)

        // No host reads as one without pins, which every expectation below then fails on.
        func host() throws -> HostPins { try store.pinSet(for: acme)?.hosts.first ?? HostPins(hostname: api, pins: []) }
        func listed() throws -> Set<Pin> { Set(try host().pins) }
        #expect(try listed() == [steady, leaving])
        #expect(try host().scheduledPins == [entering])
        let added = try #require(try store.pinSet(for: acme)?.version)

        // Before any boundary a pass changes nothing: no write, no version, no counter.
        let counter = try store.changeCounter()
        #expect(try store.applyPinWindows(at: fixture.clock.now().addingTimeInterval(49)).transitions.isEmpty)
        #expect(try store.changeCounter() == counter)

        fixture.clock.advance(by: 50)
        let entered = try store.applyPinWindows(at: fixture.clock.now()).transitions
        #expect(entered.map(\.pin) == [entering] && entered.allSatisfy(\.entered))
        let enteredVersion = try #require(try store.pinSet(for: acme)?.version)
        #expect(enteredVersion > added && entered.first?.version == enteredVersion)
        #expect(try listed() == [steady, leaving, entering])
        #expect(try host().scheduledPins.isEmpty)
        #expect(try store.logIndex(of: acme, version: enteredVersion) != nil, "the new content is logged like an edit's")
        let audit = try #require(try store.auditLog(customer: acme, limit: 1).first)
        #expect(audit.action == .pinWindowsApplied && audit.actor == PinStore.pinWindowActor && audit.version == enteredVersion)
        #expect(audit.details.contains(entering.displayName) && audit.details.contains("entered"))
        // Another instance's pass at the same time finds nothing left to do.
        #expect(try fixture.openAnother().applyPinWindows(at: fixture.clock.now()).transitions.isEmpty)

        fixture.clock.advance(by: 50)
        let left = try store.applyPinWindows(at: fixture.clock.now()).transitions
        #expect(left.map(\.pin) == [leaving] && left.allSatisfy { !$0.entered })
        let leftVersion = try #require(try store.pinSet(for: acme)?.version)
        #expect(leftVersion > enteredVersion)
        #expect(try listed() == [steady, entering])
        #expect(try host().scheduledPins == [leaving])
        #expect(try store.logIndex(of: acme, version: leftVersion) != nil)

        // Clearing the window lists the pin again at once, as an audited edit.
        try store.setPinWindow(nil, of: try #require(leaving.spkiSHA256), host: api, of: acme, actor: Sample.actor)
        #expect(try listed() == [steady, leaving.withoutWindow, entering])
        #expect(try store.auditLog(customer: acme, limit: 1).first?.action == .pinWindowChanged)
    }

    /// Two instances on one database whose clocks straddle a window's edge (one a second ahead): the first to cross
    /// it applies the change, and the one behind does not undo it, at the end of a window or at its start. Otherwise
    /// each pass of each would flip the pin, a new version, audit entry and log entry every half second.
    @Test(arguments: StoreBackend.allCases) func instancesWhoseClocksDisagreeDoNotFlipAPinAtAWindowsEdge(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store, behind = try fixture.openAnother()
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(api, to: acme, actor: Sample.actor)
        try store.addPins([try Self.pin(1), try Self.pin(2, Self.window(until: 100)), try Self.pin(3, Self.window(from: 200))], to: api, of: acme, actor: Sample.actor)
        let start = fixture.clock.now()
        for edge in [100.0, 200.0] {
            #expect(try store.applyPinWindows(at: start.addingTimeInterval(edge + 1)).transitions.count == 1, "the instance ahead crosses \(edge)")
            let version = try store.pinSet(for: acme)?.version
            for round in 0..<3 {
                #expect(try behind.applyPinWindows(at: start.addingTimeInterval(edge - 1)).transitions.isEmpty, "round \(round) at \(edge)")
                #expect(try store.applyPinWindows(at: start.addingTimeInterval(edge + 1)).transitions.isEmpty)
            }
            #expect(try store.pinSet(for: acme)?.version == version)
        }
    }

    @Test(arguments: StoreBackend.allCases) func aScheduleThatWouldUnpinAHostIsRefusedWhenMadeAndChangesNothing(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        let only = try Self.pin(1)
        try store.addHost(api, pins: [only], to: acme, actor: Sample.actor)
        let key = try #require(only.spkiSHA256)
        var before = try dump(store)

        // The only pin leaving would unpin the host at that time.
        let alone = #expect(throws: StoreError.self) { try store.setPinWindow(try Self.window(until: 100), of: key, host: api, of: acme, actor: Sample.actor) }
        #expect(alone?.code == .lastPinOfHost)
        #expect(alone?.message.contains(PinWindow.format(StoreFixture.start.addingTimeInterval(100))) == true, "the refusal names when")
        #expect(try dump(store) == before)

        // Its replacement entering first makes the same schedule acceptable; one entering after the gap does not.
        try store.addPins([try Self.pin(2, Self.window(from: 50))], to: api, of: acme, actor: Sample.actor)
        try store.setPinWindow(try Self.window(until: 100), of: key, host: api, of: acme, actor: Sample.actor)
        before = try dump(store)
        let gap = #expect(throws: StoreError.self) { try store.setPinWindow(try Self.window(until: 30), of: key, host: api, of: acme, actor: Sample.actor) }
        #expect(gap?.code == .lastPinOfHost)
        let replacementGone = #expect(throws: StoreError.self) {
            try store.removePin(try #require(Self.pin(2).spkiSHA256), from: api, of: acme, actor: Sample.actor)
        }
        #expect(replacementGone?.code == .lastPinOfHost)
        #expect(try dump(store) == before)

        // A window that ends before it begins never reaches the store.
        let backwards = #expect(throws: InputError.self) { try Self.window(from: 100, until: 100) }
        #expect(backwards?.message.contains("--not-before must be earlier than --not-after") == true)
    }

    @Test(arguments: StoreBackend.allCases) func aScheduleLeavingLegacyClientsOnePinIsRefused(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try store.addCustomer(acme, servesLegacyClients: true, actor: Sample.actor)
        let chain = try Sample.certificateChainPins()
        try store.addHost(api, pins: chain + [try Self.pin(9)], to: acme, actor: Sample.actor)
        let before = try dump(store)
        let refused = #expect(throws: StoreError.self) {
            try store.setPinWindow(try Self.window(until: 3600), of: try #require(chain[0].spkiSHA256), host: api, of: acme, actor: Sample.actor)
        }
        #expect(refused?.code == .tooFewLegacyPins)
        #expect(try dump(store) == before)
    }

    /// A pin leaving its window stays listed while the chain its host was last seen serving matches the listed
    /// pins and would match none of those left: for at most a day, and only on a recent observation.
    @Test(arguments: StoreBackend.allCases) func aPassHoldsALeavingPinWithoutWhichTheServedChainWouldMatchNothing(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme")
        let hosts = (rolledBack: try Sample.host("api.example.com"), renewed: try Sample.host("www.example.com"), seenLongAgo: try Sample.host("old.example.com"))
        try store.addCustomer(acme, actor: Sample.actor)
        // Each host: a pin that stays and one whose window ends at 100.
        var retiring: [Hostname: Pin] = [:]
        for (number, host) in [hosts.rolledBack, hosts.renewed, hosts.seenLongAgo].enumerated() {
            retiring[host] = try Self.pin(UInt8(2 * number + 2), Self.window(until: 100))
            try store.addHost(host, pins: [try Self.pin(UInt8(2 * number + 1)), retiring[host]!], to: acme, actor: Sample.actor)
        }
        func served(_ pin: Pin) throws -> [LiveCertificate] {
            [LiveCertificate(position: 0, spkiSHA256: try #require(pin.spkiSHA256), certificateSHA256: SHA256Fingerprint(of: [7]), subject: "CN=leaf",
                             notAfter: StoreFixture.start.addingTimeInterval(86_400 * 90))]
        }
        func listed(_ host: Hostname) throws -> Set<Pin> { Set(try store.pinSet(for: acme)?.hosts.first { $0.hostname == host }?.pins ?? []) }
        let end = StoreFixture.start.addingTimeInterval(100)
        var chains = ServedChains()
        // Rolled back to the retiring key; renewed onto the staying one; the rollback seen too long ago to count.
        chains.record(try served(retiring[hosts.rolledBack]!), of: hosts.rolledBack, of: acme, at: end.addingTimeInterval(-60))
        chains.record(try served(try Self.pin(3)), of: hosts.renewed, of: acme, at: end.addingTimeInterval(-60))
        chains.record(try served(retiring[hosts.seenLongAgo]!), of: hosts.seenLongAgo, of: acme, at: end.addingTimeInterval(-PinStore.servedChainMaximumAge - 1))

        let version = try #require(try store.pinSet(for: acme)?.version)
        let atEnd = try store.applyPinWindows(at: end, servedChains: chains)
        #expect(Set(atEnd.transitions.map(\.hostname)) == [hosts.renewed, hosts.seenLongAgo] && atEnd.transitions.allSatisfy { !$0.entered })
        #expect(atEnd.held.map(\.pin) == [retiring[hosts.rolledBack]!])
        #expect(atEnd.held.first?.holdEnds == end.addingTimeInterval(PinStore.maximumPinWindowHold))
        #expect(try listed(hosts.rolledBack) == [try Self.pin(1), retiring[hosts.rolledBack]!])
        #expect(try listed(hosts.renewed) == [try Self.pin(3)])
        let afterEnd = try #require(try store.pinSet(for: acme)?.version)
        #expect(afterEnd > version)

        // The hold writes nothing while it lasts, from any instance.
        let counter = try store.changeCounter()
        let later = end.addingTimeInterval(3600)
        chains.record(try served(retiring[hosts.rolledBack]!), of: hosts.rolledBack, of: acme, at: later)
        #expect(try fixture.openAnother().applyPinWindows(at: later, servedChains: chains).held.count == 1)
        #expect(try store.changeCounter() == counter)

        // A day past the window's end the pin leaves, whatever the host is seen serving.
        let dayLater = end.addingTimeInterval(PinStore.maximumPinWindowHold)
        chains.record(try served(retiring[hosts.rolledBack]!), of: hosts.rolledBack, of: acme, at: dayLater)
        let over = try store.applyPinWindows(at: dayLater, servedChains: chains)
        #expect(over.held.isEmpty && over.transitions.map(\.pin) == [retiring[hosts.rolledBack]!])
        #expect(try listed(hosts.rolledBack) == [try Self.pin(1)])
    }

    @Test func changeRequestsKeepWindows() throws {
        let window = try Self.window(from: 10, until: 20)
        let edits = [
            PinEdit(hostname: try Sample.host("api.example.com"), operation: .addPins([try Self.pin(1, window)])),
            PinEdit(hostname: try Sample.host("api.example.com"), operation: .setWindow(try #require(Self.pin(2).spkiSHA256), window)),
            PinEdit(hostname: try Sample.host("api.example.com"), operation: .setWindow(try #require(Self.pin(3).spkiSHA256), nil)),
        ]
        #expect(try StoredPinEdits.decode(try StoredPinEdits.encode(edits), request: 1) == edits)
    }
}

extension Pin {
    var withoutWindow: Pin {
        var pin = self
        pin.window = nil
        return pin
    }
}
