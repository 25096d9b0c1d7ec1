import Foundation
import PinsetAdmin
@testable import PinsetAdminAPI
import PinsetAdminContract
import PinsetCore
import PinsetStore
import Testing

/// The token looked up when a request's head arrived serves the request without a second lookup, but only for
/// the token that request carries and only for moments: a head admitted for one admin never serves another's
/// request, and a body sent slowly on purpose is authenticated again, after a revocation too.
@Suite struct AdminAPIAdmissionTests {
    static func request(token: String?) -> AdminAPIRequest {
        AdminAPIRequest(
            method: "GET", target: "/api/v1/me", headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], body: [], remoteAddress: "127.0.0.1")
    }

    static func admission(of deployment: AdminAPIInProcessTests.Deployment, _ name: String) throws -> AdminAPIServer.Admission {
        let token = try AdminToken(parsing: deployment.tokens[name]!)
        return AdminAPIServer.Admission(account: try deployment.admin.authenticate(token), tokenDigest: token.sha256)
    }

    static func me(_ response: AdminAPIResponse) -> String? {
        (try? AdminResponse.decode(AdminResponse.Me.self, from: response.body))?.name
    }

    @Test func anAdmissionServesOnlyTheRequestWhoseTokenItLookedUp() async throws {
        let deployment = try await AdminAPIInProcessTests.Deployment()
        defer { deployment.remove() }
        let olga = try Self.admission(of: deployment, "olga")
        #expect(Self.me(await deployment.api.respond(to: Self.request(token: deployment.tokens["olga"]), admission: olga)) == "olga")
        // Another admin's token, or none, under olga's admission: the request is judged by what it carries.
        #expect(Self.me(await deployment.api.respond(to: Self.request(token: deployment.tokens["vera"]), admission: olga)) == "vera")
        #expect(await deployment.api.respond(to: Self.request(token: nil), admission: olga).status == 401)
        #expect(await deployment.api.respond(to: Self.request(token: "pinset_" + String(repeating: "A", count: 43)), admission: olga).status == 401)
    }

    @Test func aStaleAdmissionIsAuthenticatedAgainAndARevocationHolds() async throws {
        let deployment = try await AdminAPIInProcessTests.Deployment()
        defer { deployment.remove() }
        var stale = try Self.admission(of: deployment, "eddie")
        _ = try deployment.store.revokeAdminTokens(of: "eddie", label: nil, actor: "test")
        // Within the lifetime the head's lookup stands, as it would for a request that arrived whole at once. (Dated
        // now: the revocation's write may take longer than the lifetime on a busy machine.)
        stale.bearer?.at = .now
        #expect(Self.me(await deployment.api.respond(to: Self.request(token: deployment.tokens["eddie"]), admission: stale)) == "eddie")
        // A request whose body took longer is looked up again: the revoked token no longer serves.
        stale.bearer?.at = .now - AdminAPI.admissionLifetime - .milliseconds(1)
        #expect(await deployment.api.respond(to: Self.request(token: deployment.tokens["eddie"]), admission: stale).status == 401)
        // The next request gets its own lookup at its head.
        #expect(await deployment.api.respond(to: Self.request(token: deployment.tokens["eddie"])).status == 401)
    }
}
