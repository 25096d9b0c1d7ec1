import PinsetCore
@testable import PinsetStore
import Testing

/// Every refused write must throw the documented code and leave the file exactly as it was: no partial
/// change, no version bump, no audit entry, no change-counter bump.
@Suite struct FailedWriteTests {
    @Test(arguments: StoreBackend.allCases) func refusedWritesChangeNothing(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let store = fixture.store
        let acme = try Sample.customer("acme"), unknown = try Sample.customer("nobody")
        let api = try Sample.host("api.example.com"), www = try Sample.host("www.example.com"), missing = try Sample.host("missing.example.com")
        try store.addCustomer(acme, actor: Sample.actor)
        try store.addHost(api, to: acme, actor: Sample.actor)
        try store.addHost(www, to: acme, actor: Sample.actor)
        try store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor)
        try store.addPins([try Sample.hashPin(3)], to: www, of: acme, actor: Sample.actor)
        var mismatched = try Sample.publicKeyPin()
        mismatched.spkiSHA256 = try Sample.hashPin(4).spkiSHA256

        let refusals: [(StoreError.Code, String, () throws -> Void)] = [
            (.customerExists, "same name", { try store.addCustomer(acme, actor: Sample.actor) }),
            (.customerExists, "name differing only in case", { try store.addCustomer(try Sample.customer("ACME"), actor: Sample.actor) }),
            (.customerNotFound, "remove unknown customer", { try store.removeCustomer(unknown, actor: Sample.actor) }),
            (.customerNotFound, "host for unknown customer", { try store.addHost(api, to: unknown, actor: Sample.actor) }),
            (.customerNotFound, "pins for unknown customer", { try store.addPins([try Sample.hashPin(9)], to: api, of: unknown, actor: Sample.actor) }),
            (.hostExists, "duplicate host", { try store.addHost(api, port: 8443, to: acme, actor: Sample.actor) }),
            (.hostExists, "duplicate host after normalisation", { try store.addHost(try Sample.host("API.Example.com."), to: acme, actor: Sample.actor) }),
            (.hostNotFound, "remove unknown host", { try store.removeHost(missing, from: acme, actor: Sample.actor) }),
            (.hostNotFound, "update unknown host", { try store.updateHost(missing, of: acme, port: 1, actor: Sample.actor) }),
            (.hostNotFound, "pins for unknown host", { try store.addPins([try Sample.hashPin(9)], to: missing, of: acme, actor: Sample.actor) }),
            (.pinExists, "duplicate pin", { try store.addPins([try Sample.hashPin(1)], to: api, of: acme, actor: Sample.actor) }),
            (.pinExists, "batch of pins all present", { try store.addPins([try Sample.hashPin(2), try Sample.hashPin(1)], to: api, of: acme, actor: Sample.actor) }),
            (.pinNotFound, "remove unknown pin", { try store.removePin(try Sample.hashPin(3).spkiSHA256!, from: api, of: acme, actor: Sample.actor) }),
            (.lastPinOfHost, "last pin without the flag", { try store.removePin(try Sample.hashPin(3).spkiSHA256!, from: www, of: acme, actor: Sample.actor) }),
            (.invalidInput, "port 0", { try store.addHost(missing, port: 0, to: acme, actor: Sample.actor) }),
            (.invalidInput, "update to port 0", { try store.updateHost(api, of: acme, port: 0, actor: Sample.actor) }),
            (.invalidInput, "empty batch", { try store.addPins([], to: api, of: acme, actor: Sample.actor) }),
            (.invalidInput, "SPKI that does not hash to the pin", { try store.addPins([try Sample.hashPin(8), mismatched], to: api, of: acme, actor: Sample.actor) }),
        ]

        let before = try dump(store)
        for (code, label, refusal) in refusals {
            let error = #expect(throws: StoreError.self, "\(label)") { try refusal() }
            #expect(error?.code == code, "\(label): \(error?.message ?? "no error")")
            #expect(try dump(store) == before, "\(label) changed the database")
        }
    }

    @Test(arguments: StoreBackend.allCases) func messagesSayWhatToDo(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let error = #expect(throws: StoreError.self) {
            try fixture.store.removeCustomer(try Sample.customer("acme"), actor: Sample.actor)
        }
        #expect(error?.message == "Customer 'acme' does not exist. List customers with 'pinset customer list'.")

        try fixture.store.addCustomer(try Sample.customer("acme"), actor: Sample.actor)
        let caseError = #expect(throws: StoreError.self) {
            try fixture.store.addCustomer(try Sample.customer("Acme"), actor: Sample.actor)
        }
        #expect(caseError?.message.contains("unique ignoring case") == true)
    }

    /// Apps replace their pins with whatever the bundle holds: a customer left without hosts would unpin
    /// every one of its hosts in one command.
    @Test(arguments: StoreBackend.allCases) func removingTheLastHostNeedsTheFlag(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com"), www = try Sample.host("www.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        try fixture.store.addHost(www, to: acme, actor: Sample.actor)
        try fixture.store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: acme, actor: Sample.actor)
        try fixture.store.removeHost(www, from: acme, actor: Sample.actor)

        let before = try dump(fixture.store)
        let error = #expect(throws: StoreError.self) { try fixture.store.removeHost(api, from: acme, actor: Sample.actor) }
        #expect(error?.code == .lastHostOfCustomer)
        #expect(error?.message.contains("--allow-last-host") == true)
        #expect(try dump(fixture.store) == before)

        try fixture.store.removeHost(api, from: acme, allowRemovingLastHost: true, actor: Sample.actor)
        #expect(try fixture.store.pinSet(for: acme)?.hosts.isEmpty == true)
    }

    @Test(arguments: StoreBackend.allCases) func failureHalfwayThroughABatchRollsBackTheWholeBatch(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        let acme = try Sample.customer("acme"), api = try Sample.host("api.example.com")
        try fixture.store.addCustomer(acme, actor: Sample.actor)
        try fixture.store.addHost(api, to: acme, actor: Sample.actor)
        let before = try dump(fixture.store)
        // A pin the schema refuses (empty SPKI) after a valid one: the valid insert must be undone too.
        var invalid = try Sample.hashPin(2)
        invalid.subjectPublicKeyInfo = []
        invalid.spkiSHA256 = SHA256Fingerprint(of: [UInt8]())
        #expect(throws: (any Error).self) {
            try fixture.store.addPins([try Sample.hashPin(1), invalid], to: api, of: acme, actor: Sample.actor)
        }
        #expect(try dump(fixture.store) == before)
    }
}
