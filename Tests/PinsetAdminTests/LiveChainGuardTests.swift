import Foundation
import PinsetAdmin
import PinsetCore
import PinsetLiveCheck
import PinsetStore
import PinsetTestSupport
import Testing

/// The edit guard without the CLI: a host that cannot be checked refuses the edit, an override or an
/// unmonitored host lets it through with the reason in the audit note.
@Suite struct AdminLiveChainGuardTests {
    static let hash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    func withHost(_ body: (AdminFixture, CustomerName, Hostname, Pin) async throws -> Void) async throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let customer = try CustomerName("acme")
        let host = try Hostname("localhost")
        try fixture.admin.addCustomer(customer, servesLegacyClients: false, by: fixture.admin.localOperator)
        // A port nothing listens on: the live chain cannot be fetched.
        let closed = try LoopbackPort.unused()
        try fixture.store.addHost(host, port: UInt16(closed), includeSubdomains: false, pins: [], to: customer, liveCheckNote: nil, actor: "admin-test")
        try await body(fixture, customer, host, try PinMaterial.pin(base64SPKIHash: Self.hash, label: ""))
    }

    func addPin(_ pin: Pin) -> (HostPins) -> (result: HostPins, edit: HostEdit) {
        { current in
            var result = current
            result.pins.append(pin)
            return (result, HostEdit(added: [pin]))
        }
    }

    @Test func anUnreachableHostRefusesTheEdit() async throws {
        try await withHost { fixture, customer, host, pin in
            let liveGuard = LiveChainGuard(store: fixture.store, customer: customer, hostname: host, settings: LiveCheckSettings())
            let error = await #expect(throws: AdminError.self) { try await liveGuard.check(addPin(pin)) }
            #expect(error?.description.contains("--skip-live-check --reason") == true, "\(error?.description ?? "")")
            let preview = try await liveGuard.preview(addPin(pin))
            #expect(!preview.outcome.permitsEdit)
            #expect(preview.edit.added.map(\.spkiSHA256) == [pin.spkiSHA256])
        }
    }

    @Test func anOverrideOrAnUnmonitoredHostLetsTheEditThroughWithItsReason() async throws {
        try await withHost { fixture, customer, host, pin in
            let overridden = LiveChainGuard(store: fixture.store, customer: customer, hostname: host, settings: LiveCheckSettings(overrideReason: "key compromised"))
            let permitted = try #require(try await overridden.check(addPin(pin)))
            #expect(permitted.record.auditNote == "live-chain check skipped with --skip-live-check: key compromised")

            _ = try fixture.store.setUnmonitored(host, of: customer, reason: "internal network only", actor: "admin-test")
            let unmonitored = LiveChainGuard(store: fixture.store, customer: customer, hostname: host, settings: LiveCheckSettings())
            let note = try #require(try await unmonitored.check(addPin(pin))).record.auditNote
            #expect(note == "live-chain check skipped: host unmonitored (internal network only)")
        }
    }

    @Test func aMissingHostIsLeftToTheStoreToReport() async throws {
        try await withHost { fixture, customer, _, pin in
            let liveGuard = LiveChainGuard(store: fixture.store, customer: customer, hostname: try Hostname("other.example.com"), settings: LiveCheckSettings())
            #expect(try await liveGuard.check(addPin(pin)) == nil)
            await #expect(throws: AdminError.self) { try await liveGuard.preview(addPin(pin)) }
        }
    }
}
