import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Break-glass: an operator applies a request without a second admin, with a reason; the application stays
/// unacknowledged until another admin acknowledges it, also after the customer is gone. And the rules an
/// approval re-checks inside its transaction, and the bound on one author's open requests. On both backends;
/// every refusal leaves the database as it was.
struct BreakGlassStoreTests {
    let acme = try! Sample.customer("acme")
    let api = try! Sample.host("api.example.com")

    func setUp(_ fixture: StoreFixture) throws {
        try fixture.store.addCustomer(acme, actor: "root")
        try fixture.store.addHost(api, to: acme, actor: "root")
        try fixture.store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: acme, actor: "root")
        try fixture.store.setRequiresReview(true, for: acme, actor: "root")
        try fixture.store.addAdmin("olga", grants: [AdminGrant(role: .operator, customer: nil)], actor: "root")
        try fixture.store.addAdmin("alice", grants: [AdminGrant(role: .editor, customer: acme)], actor: "root")
        try fixture.store.addAdmin("bob", grants: [AdminGrant(role: .reviewer, customer: acme)], actor: "root")
    }

    func request(_ fixture: StoreFixture, byte: UInt8 = 3, author: String) throws -> ChangeRequest {
        try fixture.store.createChangeRequest(for: acme, edits: [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(byte)]))],
                                              reason: "the CA reissued with a new key", lifetime: 3600, author: author)
    }

    @Test(arguments: StoreBackend.allCases)
    func anOperatorsOwnRequestIsAppliedWithoutReviewAndStaysUnacknowledgedUntilAnotherAdminAcknowledgesIt(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let request = try request(fixture, author: "olga")

        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.invalidInput, "")) { try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "  ", approverMay: { _, _ in true }) }
        #expect(throws: StoreError(.changeRequestRefused, "")) { try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], approverMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged, "without a reason, the author is still refused")

        let applied = try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "outage, no reviewer reachable", approverMay: { _, _ in true })
        #expect(applied.state == .applied && applied.decidedBy == "olga" && applied.decisionNote == "break-glass: outage, no reviewer reachable")
        #expect(try fixture.store.pinSet(for: acme)?.version == applied.appliedVersion)
        let entry = try #require(try fixture.store.auditLog(customer: acme, limit: 1).first)
        #expect(entry.actor == "olga" && entry.details.contains("applied WITHOUT REVIEW by olga (break-glass): outage, no reviewer reachable"), "\(entry.details)")

        let events = try fixture.store.breakGlassEvents()
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.changeRequestID == request.id && event.customer == "acme" && event.appliedBy == "olga" && event.appliedVersion == applied.appliedVersion && !event.isAcknowledged)

        // The operator cannot acknowledge their own; a replay of the application changes nothing.
        let applyOnce = try dump(fixture.store)
        #expect(throws: StoreError(.changeRequestRefused, "")) { try fixture.store.acknowledgeBreakGlass(event.id, note: "", actor: "OLGA", actorMay: { _, _ in true }) }
        #expect(throws: StoreError(.changeRequestRefused, "")) { try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "again", approverMay: { _, _ in true }) }
        #expect(throws: StoreError(.changeRequestNotFound, "")) { try fixture.store.acknowledgeBreakGlass(event.id + 1, note: "", actor: "bob", actorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == applyOnce)

        // Removing the customer does not remove the trace.
        try fixture.store.removeCustomer(acme, actor: "olga")
        #expect(try fixture.store.breakGlassEvents().map(\.id) == [event.id])
        // Marked as the removed customer's: a customer added later under the same name is another one.
        try fixture.store.addCustomer(acme, actor: "root")
        #expect(try fixture.store.breakGlassEvents().first?.customerRemoved == true)

        // The acknowledger's account is read again inside the write: a predicate that refuses it stops the write.
        let beforeRefusal = try dump(fixture.store)
        var asked: [String] = []
        #expect(throws: StoreError(.changeRequestRefused, "")) {
            try fixture.store.acknowledgeBreakGlass(event.id, note: "", actor: "bob") { account, _ in
                asked.append(account.name)
                return false
            }
        }
        #expect(asked == ["bob"])
        #expect(try dump(fixture.store) == beforeRefusal)
        let acknowledged = try fixture.store.acknowledgeBreakGlass(event.id, note: "checked the new key with the CA", actor: "bob", actorMay: { _, _ in true })
        #expect(acknowledged.acknowledgedBy == "bob" && acknowledged.acknowledgement == "checked the new key with the CA")
        #expect(try fixture.store.breakGlassEvents().isEmpty)
        #expect(try fixture.store.breakGlassEvents(includeAcknowledged: true).map(\.acknowledgedBy) == ["bob"])
        let audit = try #require(try fixture.store.auditLog(limit: 1).first)
        #expect(audit.actor == "bob" && audit.customer == "*" && audit.details.contains("break-glass application \(event.id)"), "\(audit.details)")
        let acknowledgedOnce = try dump(fixture.store)
        #expect(throws: StoreError(.changeRequestRefused, "")) { try fixture.store.acknowledgeBreakGlass(event.id, note: "", actor: "carol", actorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == acknowledgedOnce)
    }

    @Test(arguments: StoreBackend.allCases)
    func rolesTakenAwayOrAnAuthorDisabledWhileTheLiveChainsWereCheckedStopTheWrite(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let request = try request(fixture, author: "alice")
        let mayReview: (AdminAccount, CustomerName) -> Bool = { account, customer in
            account.disabledAt == nil && account.grants.contains { ($0.role == .reviewer || $0.role == .operator) && $0.covers(customer) }
        }
        try fixture.store.updateAdmin("bob", grants: [AdminGrant(role: .viewer, customer: acme)], disabled: nil, actor: "olga")
        var unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.changeRequestRefused, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: mayReview) }
        #expect(try dump(fixture.store) == unchanged)

        try fixture.store.updateAdmin("bob", grants: [AdminGrant(role: .reviewer, customer: acme)], disabled: nil, actor: "olga")
        try fixture.store.updateAdmin("alice", grants: nil, disabled: true, actor: "olga")
        unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.changeRequestRefused, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: mayReview) }
        #expect(try dump(fixture.store) == unchanged)

        try fixture.store.updateAdmin("alice", grants: nil, disabled: false, actor: "olga")
        #expect(try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: mayReview).state == .applied)
    }

    @Test(arguments: StoreBackend.allCases)
    func oneAuthorCannotKeepMoreThanTheLimitOfRequestsOpen(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        for _ in 0..<PinStore.maximumOpenRequestsPerAuthor { _ = try request(fixture, author: "alice") }
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.changeRequestRefused, "")) { _ = try request(fixture, author: "Alice") }
        #expect(try dump(fixture.store) == unchanged)
        // Others are not held up by one author's flood, and expired requests no longer count.
        _ = try request(fixture, author: "olga")
        fixture.clock.advance(by: 3601)
        _ = try request(fixture, author: "alice")
    }
}
