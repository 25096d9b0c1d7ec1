import Foundation
import PinsetAdmin
import PinsetCore
import PinsetStore
import Testing

/// Readers of an open request (the API's GET, the dashboard's page) share one live-chain check per request for a
/// while: reloading in a loop, or many readers at once, makes the server connect out once, not once per request.
@Suite struct ChangeRequestPreviewsTests {
    /// Counts how often a check asked for the settings to reach a host: once per host per check.
    final class Counter: Sendable {
        let count = LockedValue(0)

        var liveCheck: @Sendable (Hostname) -> LiveCheckSettings {
            { _ in
                self.count.withLock { $0 += 1 }
                return LiveCheckSettings()
            }
        }
    }

    /// A customer with one host that is unmonitored: its check needs no network, but asks for its settings all
    /// the same.
    static func unmonitoredHost() throws -> (AdminFixture, CustomerName, Hostname) {
        let fixture = try AdminFixture()
        let customer = try CustomerName("acme"), host = try Hostname("api.example.com")
        try fixture.store.addCustomer(customer, servesLegacyClients: false, actor: "test")
        try fixture.store.addHost(host, port: 443, includeSubdomains: false, to: customer, actor: "test")
        _ = try fixture.store.setUnmonitored(host, of: customer, reason: "not reachable from tests", actor: "test")
        return (fixture, customer, host)
    }

    @Test func concurrentAndRepeatedReadersShareOneCheckUntilItIsOld() async throws {
        let (fixture, customer, host) = try Self.unmonitoredHost()
        defer { fixture.remove() }
        let store = fixture.store
        let pin = try PinMaterial.pin(base64SPKIHash: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let request = try store.createChangeRequest(for: customer, edits: [PinEdit(hostname: host, operation: .addPins([pin]))],
                                                    reason: "backup key", lifetime: 3600, author: "alice")
        let counter = Counter()
        let liveCheck = counter.liveCheck
        let previews = ChangeRequestPreviews(maximumAge: 30)
        let start = Date()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await previews.previews(of: request, admin: fixture.admin, liveCheck: liveCheck, now: start).count }
            }
            for try await hosts in group { #expect(hosts == 1) }
        }
        #expect(counter.count.withLock { $0 } == 1, "fifty readers at once: one check")
        _ = try await previews.previews(of: request, admin: fixture.admin, liveCheck: liveCheck, now: start.addingTimeInterval(29))
        #expect(counter.count.withLock { $0 } == 1, "a reload within the maximum age reuses it")
        let again = try await previews.previews(of: request, admin: fixture.admin, liveCheck: liveCheck, now: start.addingTimeInterval(31))
        #expect(counter.count.withLock { $0 } == 2 && again.first?.hostname == host, "an old check is made again")
    }

    @Test func theTableStaysBounded() async throws {
        let (fixture, customer, host) = try Self.unmonitoredHost()
        defer { fixture.remove() }
        let store = fixture.store
        let counter = Counter()
        let liveCheck = counter.liveCheck
        let previews = ChangeRequestPreviews(maximumAge: 30, maximumEntries: 2)
        var requests: [ChangeRequest] = []
        for index in 0..<3 {
            let pin = try PinMaterial.pin(base64SPKIHash: Data(repeating: UInt8(index), count: 32).base64EncodedString())
            requests.append(try store.createChangeRequest(for: customer, edits: [PinEdit(hostname: host, operation: .addPins([pin]))],
                                                          reason: "key \(index)", lifetime: 3600, author: "alice"))
        }
        let now = Date()
        for (index, request) in requests.enumerated() {
            _ = try await previews.previews(of: request, admin: fixture.admin, liveCheck: liveCheck, now: now.addingTimeInterval(Double(index)))
        }
        _ = try await previews.previews(of: requests[0], admin: fixture.admin, liveCheck: liveCheck, now: now.addingTimeInterval(3))
        #expect(counter.count.withLock { $0 } == 4, "the oldest entry made room for the third, so it is checked again")
    }

    @Test func aFailedCheckIsMadeAgainByTheNextReader() async throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let store = fixture.store
        let customer = try CustomerName("acme"), host = try Hostname("api.example.com"), other = try Hostname("www.example.com")
        try store.addCustomer(customer, servesLegacyClients: false, actor: "test")
        try store.addHost(other, port: 443, includeSubdomains: false, to: customer, actor: "test")
        let pin = try PinMaterial.pin(base64SPKIHash: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        // A request for a host that is not there (yet): its check fails.
        try store.addHost(host, port: 443, includeSubdomains: false, to: customer, actor: "test")
        let request = try store.createChangeRequest(for: customer, edits: [PinEdit(hostname: host, operation: .addPins([pin]))],
                                                    reason: "backup key", lifetime: 3600, author: "alice")
        try store.removeHost(host, from: customer, actor: "test")
        let previews = ChangeRequestPreviews(maximumAge: 30)
        let now = Date()
        await #expect(throws: (any Error).self) {
            try await previews.previews(of: request, admin: fixture.admin, liveCheck: { _ in LiveCheckSettings() }, now: now)
        }
        try store.addHost(host, port: 443, includeSubdomains: false, to: customer, actor: "test")
        _ = try store.setUnmonitored(host, of: customer, reason: "not reachable from tests", actor: "test")
        let again = try await previews.previews(of: request, admin: fixture.admin, liveCheck: { _ in LiveCheckSettings() }, now: now.addingTimeInterval(1))
        #expect(again.first?.hostname == host, "the failure was not reused")
    }
}
