import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetStore
import Testing

/// The local operator (the CLI on this host's database) and a named admin go through the same operations: one set
/// of rules, the named admin further held to its roles, each audited under its own name.
@Suite struct AdminPrincipalTests {
    static let hash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    /// acme requires review and has one unmonitored host (no check leaves the machine); eddie edits acme, olga is an
    /// operator. All set up by the local operator.
    static func reviewedCustomer() throws -> (fixture: AdminFixture, acme: CustomerName, host: Hostname, eddie: AdminAccount, olga: AdminAccount) {
        let fixture = try AdminFixture()
        let admin = fixture.admin, local = try admin.localOperator
        let acme = try CustomerName("acme"), host = try Hostname("api.example.com")
        try admin.addCustomer(acme, servesLegacyClients: false, by: local)
        try admin.addHost(host, port: 443, includeSubdomains: false, to: acme, by: local)
        #expect(try admin.setUnmonitored(host, of: acme, reason: "not reachable from tests", by: local))
        try admin.setRequiresReview(true, for: acme, by: local)
        try admin.addAdmin("eddie", grants: [AdminGrant(role: .editor, customer: acme)], by: local)
        try admin.addAdmin("olga", grants: [AdminGrant(role: .operator, customer: nil)], by: local)
        let admins = try admin.admins(visibleTo: local)
        return (fixture, acme, host, try #require(admins.first { $0.name == "eddie" }), try #require(admins.first { $0.name == "olga" }))
    }

    @Test func theLocalOperatorHoldsEveryRoleAndIsAuditedUnderItsActor() throws {
        let (fixture, acme, host, eddie, _) = try Self.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        let dumpBefore = try fixture.dump()
        let refused = #expect(throws: AdminError.self) { try admin.removeHost(host, from: acme, allowLastHost: true, by: .admin(eddie)) }
        #expect(refused?.kind == .forbidden && refused?.description.contains("which requires review") == true, "\(refused?.description ?? "")")
        #expect(throws: AdminError.self) { try admin.admins(visibleTo: .admin(eddie)) }
        #expect(throws: AdminError.self) { try admin.auditLog(of: nil, visibleTo: .admin(eddie), limit: 10) }
        #expect(try fixture.dump() == dumpBefore, "a refused operation changes nothing")

        try admin.removeHost(host, from: acme, allowLastHost: true, by: admin.localOperator)
        let entry = try #require(try admin.auditLog(of: acme, visibleTo: admin.localOperator, limit: 1).first)
        #expect(entry.actor == "admin-test" && entry.action == .hostRemoved, "\(entry)")
    }

    @Test func aDirectPinEditOfAReviewedCustomerIsTheLocalOperatorsAlone() async throws {
        let (fixture, acme, host, eddie, olga) = try Self.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        let pin = try PinMaterial.pin(base64SPKIHash: Self.hash, label: "")
        let edit = PinEdit(hostname: host, operation: .addPins([pin]))
        let checked = try await admin.liveChainGuard(for: host, of: acme, settings: LiveCheckSettings()).check { edit.applied(to: $0) }
        #expect(checked?.record.auditNote == "live-chain check skipped: host unmonitored (not reachable from tests)")
        // A named admin's edit of a customer that requires review is a change request, even an operator's.
        for named in [eddie, olga] {
            #expect(throws: (any Error).self) { try admin.applyPinEdit(edit, of: acme, checked: checked, by: .admin(named)) }
        }
        let change = try admin.applyPinEdit(edit, of: acme, checked: checked, by: admin.localOperator)
        #expect(change.changed == [try #require(pin.spkiSHA256)] && change.pinCount == 1)
        // A named admin adds hosts without pins: they are proposed as pin edits.
        let other = try Hostname("www.example.com")
        #expect(throws: AdminError.self) {
            try admin.addHost(other, port: 443, includeSubdomains: false, pins: [pin], checked: .unmonitored(reason: "test"), to: acme, by: .admin(olga))
        }
        #expect(try admin.pinSet(of: acme, visibleTo: .admin(eddie)).hosts.map(\.hostname) == [host])
    }

    /// A customer a named admin adds needs review unless it says otherwise; one the local operator adds does not.
    /// A signing identity made elsewhere is the local operator's to install: a named admin's key is made here.
    @Test func defaultsAndIdentitiesFollowWhoActs() throws {
        let (fixture, acme, _, _, olga) = try Self.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        let byOlga = try CustomerName("by-olga"), local = try CustomerName("by-operator")
        try admin.addCustomer(byOlga, servesLegacyClients: false, by: .admin(olga))
        try admin.addCustomer(local, servesLegacyClients: false, by: admin.localOperator)
        #expect(try admin.requiresReview(of: byOlga, visibleTo: admin.localOperator))
        #expect(try !admin.requiresReview(of: local, visibleTo: admin.localOperator))
        let dumpBefore = try fixture.dump()
        let identity = try AdminFixture.identity("acme")
        let imported = #expect(throws: AdminError.self) {
            try admin.rotateCustomerIdentity(of: acme, to: identity, replaceTrustAnchor: true, by: .admin(olga))
        }
        #expect(imported?.kind == .forbidden, "\(imported?.description ?? "")")
        let withKey = #expect(throws: AdminError.self) {
            try admin.addCustomer(try CustomerName("keyed"), servesLegacyClients: false, ownIdentity: identity, by: .admin(olga))
        }
        #expect(withKey?.kind == .forbidden, "\(withKey?.description ?? "")")
        #expect(try fixture.dump() == dumpBefore, "a refused operation changes nothing")
    }

    @Test func theRulesOfAnUnmonitoredReasonHoldForBoth() throws {
        let (fixture, acme, host, _, olga) = try Self.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        for principal in [try admin.localOperator, .admin(olga)] {
            let control = #expect(throws: StoreError.self) { try admin.setUnmonitored(host, of: acme, reason: "office\u{1B}[2J", by: principal) }
            #expect(control?.description.contains("control character") == true, "\(control?.description ?? "")")
            let empty = #expect(throws: StoreError.self) { try admin.setUnmonitored(host, of: acme, reason: "  ", by: principal) }
            #expect(empty?.description.contains("1 to \(AdminLimits.reasonLength) characters") == true, "\(empty?.description ?? "")")
            // The bound every reason an admin writes has, the API's declaration included: counted in characters.
            let long = #expect(throws: StoreError.self) {
                try admin.setUnmonitored(host, of: acme, reason: String(repeating: "é", count: AdminLimits.reasonLength + 1), by: principal)
            }
            #expect(long?.description.contains("give at most \(AdminLimits.reasonLength)") == true, "\(long?.description ?? "")")
            #expect(try admin.setUnmonitored(host, of: acme, reason: String(repeating: "é", count: AdminLimits.reasonLength), by: principal))
            #expect(try admin.setUnmonitored(host, of: acme, reason: "not reachable from tests", by: principal))
        }
        #expect(try admin.setUnmonitored(host, of: acme, reason: nil, by: .admin(olga)))
        #expect(try admin.auditLog(of: acme, visibleTo: .admin(olga), limit: 1).first?.actor == "olga")
    }
}

/// Only the CLI's own `Admin` acts as the local operator: the one the server builds for the admin API and the
/// dashboard has no principal that holds every role to hand out.
@Suite struct LocalOperatorScopeTests {
    @Test func anAdminMadeForNamedAdminsHasNoLocalOperator() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let server = Admin(store: fixture.store, dataDirectory: fixture.dataDirectory, actor: "admin-api")
        let refusal = #expect(throws: AdminError.self) { try server.localOperator }
        #expect(refusal?.kind == .forbidden)
        #expect(try fixture.admin.localOperator.isOperator)
    }
}
