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
        #expect(throws: StoreError(.invalidInput, "")) { try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "  ", approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(throws: StoreError(.selfApproval, "")) { try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged, "without a reason, the author is still refused")

        let applied = try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "outage, no reviewer reachable", approverMay: { _, _ in true }, authorMay: { _, _ in true })
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
        #expect(throws: StoreError(.selfApproval, "")) { try fixture.store.acknowledgeBreakGlass(event.id, note: "", actor: "OLGA", actorMay: { _, _ in true }) }
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "again", approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
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
        #expect(throws: StoreError(.notPermittedAnyMore, "")) {
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
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.acknowledgeBreakGlass(event.id, note: "", actor: "carol", actorMay: { _, _ in true }) }
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
        #expect(throws: StoreError(.notPermittedAnyMore, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: mayReview, authorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged)

        try fixture.store.updateAdmin("bob", grants: [AdminGrant(role: .reviewer, customer: acme)], disabled: nil, actor: "olga")
        #expect(try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: mayReview, authorMay: { _, _ in true }).state == .applied,
                "with its role back, bob applies it")

        // An author disabled meanwhile: the disabling voided the request, and enabling the author again does not revive it.
        let second = try self.request(fixture, byte: 4, author: "alice")
        try fixture.store.updateAdmin("alice", grants: nil, disabled: true, actor: "olga")
        try fixture.store.updateAdmin("alice", grants: nil, disabled: false, actor: "olga")
        unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(second.id, approver: "bob", liveChecks: [:], approverMay: mayReview, authorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged)
    }

    @Test(arguments: StoreBackend.allCases)
    func theAuthorOfARequestAppliedByBreakGlassCannotAcknowledgeIt(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        // alice is made a reviewer too, so that only the rule about the author stands in her way.
        try fixture.store.updateAdmin("alice", grants: [AdminGrant(role: .editor, customer: acme), AdminGrant(role: .reviewer, customer: acme)], disabled: nil, actor: "root")
        let request = try request(fixture, author: "alice")
        _ = try fixture.store.applyChangeRequest(request.id, approver: "olga", liveChecks: [:], breakGlassReason: "outage", approverMay: { _, _ in true }, authorMay: { _, _ in true })
        let event = try #require(try fixture.store.breakGlassEvents().first)
        #expect(event.requestAuthor == "alice" && event.involves("ALICE") && event.involves("olga") && !event.involves("bob"))

        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.selfApproval, "")) { try fixture.store.acknowledgeBreakGlass(event.id, note: "looks fine to me", actor: "Alice", actorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged, "the author's acknowledgement changes nothing")
        #expect(try fixture.store.acknowledgeBreakGlass(event.id, note: "", actor: "bob", actorMay: { _, _ in true }).acknowledgedBy == "bob")
    }

    @Test(arguments: StoreBackend.allCases)
    func revokingATokenVoidsTheOpenRequestsItMadeAndThoseThatRecordNoToken(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let laptop = AdminTokenReference(sha256: SHA256Fingerprint(of: Array("laptop token".utf8)), label: "laptop")
        let ci = AdminTokenReference(sha256: SHA256Fingerprint(of: Array("ci token".utf8)), label: "ci")
        try fixture.store.addAdminToken(sha256: laptop.sha256, of: "alice", label: laptop.label, expiresAt: nil, actor: "root")
        try fixture.store.addAdminToken(sha256: ci.sha256, of: "alice", label: ci.label, expiresAt: nil, actor: "root")
        func propose(_ byte: UInt8, with token: AdminTokenReference?) throws -> ChangeRequest {
            try fixture.store.createChangeRequest(for: acme, edits: [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(byte)]))],
                                                  reason: "new key", lifetime: 3600, author: "alice", authorToken: token)
        }
        let stolen = try propose(3, with: laptop)
        let other = try propose(4, with: ci)
        let tokenless = try propose(5, with: nil)
        #expect(try fixture.store.changeRequest(stolen.id)?.authorTokenLabel == "laptop")
        #expect(try fixture.store.admin(authenticatedBy: laptop.sha256)?.token == laptop, "an authenticated account says which token it used")

        let revocation = try fixture.store.revokeAdminTokens(of: "alice", label: "laptop", actor: "olga")
        // A request that records no token (made before tokens were recorded) may have come from the revoked one.
        #expect(revocation == AdminTokenRevocation(revokedTokens: 1, voidedRequests: [stolen.id, tokenless.id]))
        let voided = try #require(try fixture.store.changeRequest(stolen.id))
        #expect(voided.state == .voided && voided.decidedBy == "olga" && voided.voidReason?.contains("token 'laptop' of alice") == true)
        #expect(try fixture.store.changeRequest(tokenless.id)?.voidReason?.contains("records no token") == true)
        #expect(try fixture.store.changeRequest(other.id)?.state == .open, "a request made with another token stays open")
        #expect(!(try fixture.store.changeRequests()).contains { $0.id == stolen.id }, "a voided request is no longer listed as open")
        #expect(try fixture.store.changeRequests(includeDecided: true).first { $0.id == stolen.id }?.state == .voided)
        let audit = try fixture.store.auditLog(customer: acme, limit: 2)
        #expect(audit.contains { $0.actor == "olga" && $0.details.contains("change request \(stolen.id) by alice voided") }, "\(audit.map(\.details))")

        // Neither approval nor break-glass nor a new request with the revoked token gets through.
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(stolen.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(stolen.id, approver: "olga", liveChecks: [:], breakGlassReason: "outage", approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(throws: StoreError(.notPermittedAnyMore, "")) { _ = try propose(6, with: laptop) }
        #expect(try dump(fixture.store) == unchanged)
    }

    @Test(arguments: StoreBackend.allCases)
    func aRequestWhoseAuthorLostTheRoleToProposeItIsNotApplied(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let request = try request(fixture, author: "alice")
        let mayEdit: (AdminAccount, CustomerName) -> Bool = { account, customer in
            account.grants.contains { ($0.role == .editor || $0.role == .operator) && $0.covers(customer) }
        }
        try fixture.store.updateAdmin("alice", grants: [AdminGrant(role: .viewer, customer: acme)], disabled: nil, actor: "olga")
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.notPermittedAnyMore, "")) { try fixture.store.requireAuthorStillMayPropose(request, authorMay: mayEdit) }
        #expect(throws: StoreError(.notPermittedAnyMore, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: mayEdit) }
        #expect(try dump(fixture.store) == unchanged)
        try fixture.store.updateAdmin("alice", grants: [AdminGrant(role: .editor, customer: acme)], disabled: nil, actor: "olga")
        #expect(try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: mayEdit).state == .applied)
    }

    @Test(arguments: StoreBackend.allCases)
    func oneAuthorCannotKeepMoreThanTheLimitOfRequestsOpen(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        for _ in 0..<PinStore.maximumOpenRequestsPerAuthor { _ = try request(fixture, author: "alice") }
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.tooManyOpenRequests, "")) { _ = try request(fixture, author: "Alice") }
        #expect(try dump(fixture.store) == unchanged)
        // Others are not held up by one author's flood, and expired requests no longer count.
        _ = try request(fixture, author: "olga")
        fixture.clock.advance(by: 3601)
        _ = try request(fixture, author: "alice")
    }
}
