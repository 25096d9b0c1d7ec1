import Foundation
import PinsetCore
@testable import PinsetStore
import PinsetTestSupport
import Testing

/// Named admins, their tokens, and change requests: stored, decided once, applied in one transaction, and
/// never applied by their author, after expiry or over a host that changed since its live-chain check. On both
/// backends; every refusal leaves the database as it was.
struct ChangeRequestStoreTests {
    let acme = try! Sample.customer("acme")
    let globex = try! Sample.customer("globex")
    let api = try! Sample.host("api.example.com")

    func setUp(_ fixture: StoreFixture) throws {
        for customer in [acme, globex] {
            try fixture.store.addCustomer(customer, actor: "root")
            try fixture.store.addHost(api, to: customer, actor: "root")
            try fixture.store.addPins([try Sample.hashPin(1), try Sample.hashPin(2)], to: api, of: customer, actor: "root")
        }
        try fixture.store.setRequiresReview(true, for: acme, actor: "root")
        // Applying re-reads the approver's and the author's accounts inside the write.
        for name in ["alice", "bob", "carol"] {
            try fixture.store.addAdmin(name, grants: [AdminGrant(role: .reviewer, customer: acme)], actor: "root")
        }
    }

    func addition(_ byte: UInt8) throws -> [PinEdit] {
        [PinEdit(hostname: api, operation: .addPins([try Sample.hashPin(byte)]))]
    }

    /// Reviewers approve by number: a request removed with its customer must not lend its number to the next request,
    /// or an approval meant for the first (a dashboard page left open) would apply the second.
    @Test(arguments: StoreBackend.allCases)
    func aRequestNumberIsNeverGivenTwice(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        try fixture.store.setRequiresReview(true, for: globex, actor: "root")
        let first = try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "renewal", lifetime: 3600, author: "alice")
        try fixture.store.removeCustomer(acme, actor: "root")
        let second = try fixture.store.createChangeRequest(for: globex, edits: try addition(4), reason: "renewal", lifetime: 3600, author: "alice")
        #expect(second.id > first.id)
        #expect(try fixture.store.changeRequest(first.id) == nil)
    }

    @Test(arguments: StoreBackend.allCases)
    func aRequestIsStoredWithoutChangingThePinsAndAppliedOnceByAnotherAdmin(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let before = try #require(try fixture.store.pinSet(for: acme))
        let request = try fixture.store.createChangeRequest(for: acme, edits: try addition(3) + [PinEdit(hostname: api, operation: .removePin(try Sample.hashPin(1).spkiSHA256!, allowLastPin: false))],
                                                            reason: "renewal with a new key", lifetime: 3600, author: "alice")
        #expect(try fixture.store.pinSet(for: acme) == before, "a request publishes nothing")
        #expect(try fixture.store.changeRequests(of: acme).map(\.id) == [request.id])
        #expect(try fixture.store.changeRequest(request.id)?.edits == request.edits, "the edits round-trip through the stored JSON")

        // Its author cannot approve it; the database stays as it was.
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.selfApproval, "")) { try fixture.store.applyChangeRequest(request.id, approver: "Alice", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged)

        fixture.clock.advance(by: 60)
        let applied = try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true })
        #expect(applied.state == .applied && applied.decidedBy == "bob")
        let after = try #require(try fixture.store.pinSet(for: acme))
        #expect(after.version == applied.appliedVersion && after.version > before.version)
        #expect(Set(after.hosts[0].pins.compactMap(\.spkiSHA256)) == [try Sample.hashPin(2).spkiSHA256!, try Sample.hashPin(3).spkiSHA256!])
        let audit = try fixture.store.auditLog(customer: acme, limit: 2)
        #expect(audit.allSatisfy { $0.actor == "bob" && $0.details.contains("change request \(request.id) by alice, approved by bob") })

        // A replayed approval changes nothing.
        let applyOnce = try dump(fixture.store)
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(request.id, approver: "carol", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.rejectChangeRequest(request.id, note: "late", actor: "carol") }
        #expect(try dump(fixture.store) == applyOnce)
        #expect(try fixture.store.changeRequests(of: acme).isEmpty)
        #expect(try fixture.store.changeRequests(of: acme, includeDecided: true).first?.state == .applied)
    }

    @Test(arguments: StoreBackend.allCases)
    func anExpiredRequestCannotBeApprovedButCanBeRejected(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let request = try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "r", lifetime: 3600, author: "alice")
        fixture.clock.advance(by: 3600)
        #expect(try fixture.store.changeRequest(request.id)?.state == .expired)
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged)
        let rejected = try fixture.store.rejectChangeRequest(request.id, note: "stale", actor: "bob")
        #expect(rejected.state == .rejected && rejected.decisionNote == "stale")
        #expect(throws: StoreError(.notOpen, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
    }

    @Test(arguments: StoreBackend.allCases)
    func aRequestMadeForAnOlderPinSetIsRefusedAndStaysOpen(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let request = try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "r", lifetime: 3600, author: "alice")
        let checked = try #require(try fixture.store.pinSet(for: acme)?.hosts.first)
        // Someone edits the customer after the request was made (here between the live-chain check and the
        // approval): what was reviewed is no longer what would be applied to.
        try fixture.store.addPins([try Sample.hashPin(4)], to: api, of: acme, actor: "root")
        let unchanged = try dump(fixture.store)
        let error = #expect(throws: StoreError(.stalePinSet, "")) {
            try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [api: LiveCheckRecord(checkedHost: checked, auditNote: "checked")], approverMay: { _, _ in true }, authorMay: { _, _ in true })
        }
        #expect(error?.message.contains("the pins changed since it was reviewed") == true)
        #expect(try dump(fixture.store) == unchanged)
        #expect(try fixture.store.changeRequest(request.id)?.state == .open)
    }

    @Test(arguments: StoreBackend.allCases)
    func aRequestThatAddsAndRemovesOnOneCheckedHostIsApplied(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let edits = try addition(3) + [PinEdit(hostname: api, operation: .removePin(try Sample.hashPin(1).spkiSHA256!, allowLastPin: false))]
        let request = try fixture.store.createChangeRequest(for: acme, edits: edits, reason: "swap a key", lifetime: 3600, author: "alice")
        let checked = try #require(try fixture.store.pinSet(for: acme)?.hosts.first)
        let applied = try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [api: LiveCheckRecord(checkedHost: checked, auditNote: "live chain matches")], approverMay: { _, _ in true }, authorMay: { _, _ in true })
        #expect(applied.state == .applied)
        #expect(Set(try #require(try fixture.store.pinSet(for: acme)).hosts[0].pins.compactMap(\.spkiSHA256)) == [try Sample.hashPin(2).spkiSHA256!, try Sample.hashPin(3).spkiSHA256!])
        #expect(try fixture.store.auditLog(customer: acme, limit: 2).allSatisfy { $0.details.contains("live chain matches; change request") })
    }

    @Test(arguments: StoreBackend.allCases)
    func aDirectEditOfACustomerThatRequiresReviewIsRefusedInItsTransaction(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.reviewRequired, "")) {
            try fixture.store.addPins([try Sample.hashPin(3)], to: api, of: acme, unlessReviewRequired: true, actor: "alice")
        }
        #expect(throws: StoreError(.reviewRequired, "")) {
            try fixture.store.removePin(try Sample.hashPin(1).spkiSHA256!, from: api, of: acme, unlessReviewRequired: true, actor: "alice")
        }
        #expect(try dump(fixture.store) == unchanged)
        try fixture.store.addPins([try Sample.hashPin(3)], to: api, of: globex, unlessReviewRequired: true, note: "reason: renewal", actor: "alice")
        #expect(try fixture.store.auditLog(customer: globex, limit: 1).first?.details.hasSuffix("reason: renewal") == true)
    }

    @Test(arguments: StoreBackend.allCases)
    func anEditTheStoreRefusesRollsBackEveryEditOfTheRequest(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        // The first edit would apply; the second removes a pin the host does not have.
        let edits = try addition(3) + [PinEdit(hostname: api, operation: .removePin(try Sample.hashPin(9).spkiSHA256!, allowLastPin: false))]
        let request = try fixture.store.createChangeRequest(for: acme, edits: edits, reason: "r", lifetime: 3600, author: "alice")
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.pinNotFound, "")) { try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true }) }
        #expect(try dump(fixture.store) == unchanged)
    }

    @Test(arguments: StoreBackend.allCases)
    func badRequestsAreRefusedBeforeAnythingIsStored(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.invalidInput, "")) { try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "  ", lifetime: 3600, author: "alice") }
        #expect(throws: StoreError(.invalidInput, "")) { try fixture.store.createChangeRequest(for: acme, edits: [], reason: "r", lifetime: 3600, author: "alice") }
        #expect(throws: StoreError(.invalidInput, "")) { try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "r", lifetime: 31 * 86_400, author: "alice") }
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "fine\n2026-01-01 bob approved", lifetime: 3600, author: "alice")
        }
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "safe \u{202E}txt.exe", lifetime: 3600, author: "alice")
        }
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: String(repeating: "e\u{301}", count: 600), lifetime: 3600, author: "alice")
        }
        #expect(throws: StoreError(.hostNotFound, "")) {
            try fixture.store.createChangeRequest(for: acme, edits: [PinEdit(hostname: try Sample.host("other.example.com"), operation: .addPins([try Sample.hashPin(3)]))],
                                                  reason: "r", lifetime: 3600, author: "alice")
        }
        var forged = try Sample.hashPin(3)
        forged.subjectPublicKeyInfo = [0x30, 0x00]
        #expect(throws: StoreError(.invalidInput, "")) {
            try fixture.store.createChangeRequest(for: acme, edits: [PinEdit(hostname: api, operation: .addPins([forged]))], reason: "r", lifetime: 3600, author: "alice")
        }
        #expect(try dump(fixture.store) == unchanged)
    }

    @Test(arguments: StoreBackend.allCases)
    func aTokenAuthenticatesItsEnabledAdminUntilRevokedOrExpired(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        try fixture.store.updateAdmin("alice", grants: [AdminGrant(role: .editor, customer: acme)], disabled: nil, actor: "root")
        let laptop = SHA256Fingerprint(of: Array("laptop token".utf8))
        let ci = SHA256Fingerprint(of: Array("ci token".utf8))
        try fixture.store.addAdminToken(sha256: laptop, of: "alice", label: "laptop", expiresAt: nil, actor: "root")
        try fixture.store.addAdminToken(sha256: ci, of: "alice", label: "ci", expiresAt: StoreFixture.start.addingTimeInterval(600), actor: "root")
        #expect(try fixture.store.admin(authenticatedBy: laptop, at: StoreFixture.start)?.grants == [AdminGrant(role: .editor, customer: acme)])
        #expect(try fixture.store.admin(authenticatedBy: ci, at: StoreFixture.start)?.name == "alice")
        #expect(try fixture.store.admin(authenticatedBy: ci, at: StoreFixture.start.addingTimeInterval(600)) == nil, "expired")
        #expect(try fixture.store.admin(authenticatedBy: SHA256Fingerprint(of: Array("guess".utf8)), at: StoreFixture.start) == nil)

        #expect(try fixture.store.revokeAdminTokens(of: "alice", label: "laptop", actor: "root").revokedTokens == 1)
        #expect(try fixture.store.admin(authenticatedBy: laptop, at: StoreFixture.start) == nil, "revoked")
        #expect(try fixture.store.admins(at: StoreFixture.start).first { $0.name == "alice" }?.activeTokens == 1)

        // Disabling is the answer to a token in the wrong hands: enabling the admin again brings no token back.
        try fixture.store.updateAdmin("alice", grants: nil, disabled: true, actor: "root")
        #expect(try fixture.store.admin(authenticatedBy: ci, at: StoreFixture.start) == nil, "disabled")
        try fixture.store.updateAdmin("alice", grants: nil, disabled: false, actor: "root")
        #expect(try fixture.store.admin(authenticatedBy: ci, at: StoreFixture.start) == nil, "revoked by the disabling")
        #expect(try fixture.store.admins(at: StoreFixture.start).first { $0.name == "alice" }?.activeTokens == 0)
        let desk = SHA256Fingerprint(of: Array("desk token".utf8))
        try fixture.store.addAdminToken(sha256: desk, of: "alice", label: "desk", expiresAt: nil, actor: "root")
        #expect(try fixture.store.admin(authenticatedBy: desk, at: StoreFixture.start)?.name == "alice", "a new token works")

        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.adminExists, "")) { try fixture.store.addAdmin("ALICE", grants: [AdminGrant(role: .viewer, customer: nil)], actor: "root") }
        #expect(throws: StoreError(.invalidInput, "")) { try fixture.store.addAdmin("bob\nforged", grants: [AdminGrant(role: .viewer, customer: nil)], actor: "root") }
        #expect(throws: StoreError(.adminNotFound, "")) { try fixture.store.addAdminToken(sha256: ci, of: "mallory", label: "x", expiresAt: nil, actor: "root") }
        #expect(try dump(fixture.store) == unchanged)
        #expect(try fixture.store.auditLog(limit: 10).contains { $0.customer == "*" && $0.action == .adminTokenAdded })
    }

    /// Disabling an admin voids its open requests with its tokens: enabling it again revives neither.
    @Test(arguments: StoreBackend.allCases)
    func disablingAnAdminVoidsItsOpenRequestsForGood(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let request = try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "renewal", lifetime: 3600, author: "alice")
        let other = try fixture.store.createChangeRequest(for: acme, edits: try addition(4), reason: "renewal", lifetime: 3600, author: "carol")
        try fixture.store.updateAdmin("alice", grants: nil, disabled: true, actor: "root")
        try fixture.store.updateAdmin("alice", grants: nil, disabled: false, actor: "root")
        let voided = try #require(try fixture.store.changeRequest(request.id))
        #expect(voided.state == .voided && voided.voidReason?.contains("alice was disabled by root") == true, "\(voided)")
        #expect(try fixture.store.changeRequest(other.id)?.state == .open, "another author's request stays open")
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.notOpen, "")) {
            try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true })
        }
        #expect(try dump(fixture.store) == unchanged)
    }

    /// A write made on behalf of a token (the admin API, the dashboard) requires that token inside its transaction:
    /// an approval whose token is revoked, or whose admin is disabled, while its live chains are checked changes
    /// nothing. Without a token in scope (the local CLI) writes are unaffected.
    @Test(arguments: StoreBackend.allCases)
    func aWriteRequiresTheTokenItIsMadeWithToBeValidStill(_ backend: StoreBackend) throws {
        let fixture = try StoreFixture(backend)
        try setUp(fixture)
        let bobToken = SHA256Fingerprint(of: Array("bob token".utf8))
        try fixture.store.addAdminToken(sha256: bobToken, of: "bob", label: "laptop", expiresAt: StoreFixture.start.addingTimeInterval(600), actor: "root")
        let reference = AdminTokenReference(sha256: bobToken, label: "laptop")
        let request = try fixture.store.createChangeRequest(for: acme, edits: try addition(3), reason: "renewal", lifetime: 3600, author: "alice")
        func approve() throws {
            _ = try fixture.store.applyChangeRequest(request.id, approver: "bob", liveChecks: [:], approverMay: { _, _ in true }, authorMay: { _, _ in true })
        }

        try fixture.store.revokeAdminTokens(of: "bob", label: "laptop", actor: "root")
        let unchanged = try dump(fixture.store)
        #expect(throws: StoreError(.notPermittedAnyMore, "")) {
            try AdminCredentialScope.$token.withValue(reference) { try approve() }
        }
        #expect(try dump(fixture.store) == unchanged, "revoked meanwhile")

        let renewed = SHA256Fingerprint(of: Array("bob token 2".utf8))
        try fixture.store.addAdminToken(sha256: renewed, of: "bob", label: "desk", expiresAt: StoreFixture.start.addingTimeInterval(600), actor: "root")
        let renewedReference = AdminTokenReference(sha256: renewed, label: "desk")
        fixture.clock.advance(by: 600)
        let beforeExpiry = try dump(fixture.store)
        #expect(throws: StoreError(.notPermittedAnyMore, "")) {
            try AdminCredentialScope.$token.withValue(renewedReference) { try approve() }
        }
        #expect(try dump(fixture.store) == beforeExpiry, "expired meanwhile")

        try fixture.store.addAdminToken(sha256: SHA256Fingerprint(of: Array("bob token 3".utf8)), of: "bob", label: "third", expiresAt: nil, actor: "root")
        let third = AdminTokenReference(sha256: SHA256Fingerprint(of: Array("bob token 3".utf8)), label: "third")
        try AdminCredentialScope.$token.withValue(third) { try approve() }
        #expect(try fixture.store.changeRequest(request.id)?.state == .applied, "a valid token applies it")
    }
}
