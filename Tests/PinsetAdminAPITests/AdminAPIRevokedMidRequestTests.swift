import Foundation
import PinsetAdmin
import PinsetAdminAPI
import PinsetAdminContract
import PinsetCore
import PinsetStore
import PinsetTestSupport
import Testing

/// What an admin whose token is revoked (or who is disabled) while its request is being checked gets: nothing
/// written. The revocation happens where a slow live chain would give it time, between authentication and the write:
/// in the live-check settings the operation asks for before it checks the chains.
@Suite struct AdminAPIRevokedMidRequestTests {
    typealias Deployment = AdminAPIInProcessTests.Deployment

    /// An API over the deployment's admin whose live-check hook runs `meanwhile` first.
    static func api(_ deployment: Deployment, meanwhile: @escaping @Sendable (PinStore) -> Void) -> AdminAPI {
        let store = deployment.store
        return AdminAPI(admin: deployment.admin, liveCheck: { _ in
            meanwhile(store)
            return LiveCheckSettings()
        })
    }

    static func call(_ api: AdminAPI, _ operation: AdminOperation, token: String, parameters: [String: String], body: String) async -> (status: Int, code: AdminErrorCode?) {
        let response = await api.respond(to: AdminAPIRequest(
            method: operation.method, target: operation.target(parameters, query: []),
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: Array(body.utf8), remoteAddress: "127.0.0.1"))
        return (response.status, try? JSONDecoder().decode(AdminAPIError.self, from: Data(response.body)).code)
    }

    /// What an approval or edit would change. The revocation itself is written (tokens, audit), so not the whole file.
    static func requestsAndPins(_ deployment: Deployment) throws -> String {
        try ProcessRunner.run("sqlite3", [deployment.store.path, "SELECT * FROM change_request; SELECT * FROM pin; SELECT * FROM customer;"]).stdoutText
    }

    @Test func anApprovalWhoseTokenIsRevokedWhileItIsCheckedChangesNothing() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let api = Self.api(deployment) { store in _ = try? store.revokeAdminTokens(of: "rita", label: nil, actor: "an operator") }
        let before = try Self.requestsAndPins(deployment)
        let answer = await Self.call(api, .approveChangeRequest, token: deployment.tokens["rita"]!, parameters: ["id": String(deployment.openRequest)], body: "{}")
        #expect(answer.status == 409 && answer.code == .notPermittedAnyMore, "\(answer)")
        #expect(try Self.requestsAndPins(deployment) == before, "the request stays open and the pins as they were")
        #expect(try deployment.store.changeRequest(deployment.openRequest)?.state == .open)
    }

    @Test func anEditWhoseAdminIsDisabledWhileItIsCheckedChangesNothing() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let api = Self.api(deployment) { store in try? store.updateAdmin("eddie", grants: nil, disabled: true, actor: "an operator") }
        let before = try Self.requestsAndPins(deployment)
        let hash = Data(repeating: 9, count: 32).base64EncodedString()
        let answer = await Self.call(api, .editPins, token: deployment.tokens["eddie"]!, parameters: ["customer": Deployment.customer, "hostname": Deployment.host],
                                     body: #"{"hashes": ["\#(hash)"], "reason": "a backup key"}"#)
        #expect(answer.status == 409 && answer.code == .notPermittedAnyMore, "\(answer)")
        #expect(try Self.requestsAndPins(deployment) == before)
    }

    /// The same calls with the token left alone succeed: the refusals above are the revocation's doing.
    @Test func withTheTokenValidThroughoutTheSameCallsApply() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let api = Self.api(deployment) { _ in }
        let approved = await Self.call(api, .approveChangeRequest, token: deployment.tokens["rita"]!, parameters: ["id": String(deployment.openRequest)], body: "{}")
        #expect(approved.status == 200, "\(approved)")
        #expect(try deployment.store.changeRequest(deployment.openRequest)?.state == .applied)
    }
}

/// Input the declarations cannot tell apart is refused in the caller's terms.
@Suite struct AdminAPIAmbiguousInputTests {
    @Test func aQueryParameterGivenTwiceIsRefused() async throws {
        let deployment = try await AdminAPIInProcessTests.Deployment()
        defer { deployment.remove() }
        let once = await deployment.call(.pinFailures, as: "olga", query: [("since", "1h")])
        #expect(once.status == 200)
        let twice = await deployment.call(.pinFailures, as: "olga", query: [("since", "1h"), ("since", "3650d")])
        #expect(twice.status == 400 && String(decoding: twice.body, as: UTF8.self).contains("more than once"), "\(String(decoding: twice.body, as: UTF8.self))")
    }

    @Test func aBodyOfTheWrongShapeIsToldByFieldNotByDecoderInternals() async throws {
        let deployment = try await AdminAPIInProcessTests.Deployment()
        defer { deployment.remove() }
        for body in [#"{"hashes": [], "notBefore": 1e400}"#, #"{"hashes": "not a list"}"#, #"{"hashes": [1]}"#] {
            let answer = await deployment.call(.editPins, as: "olga", body: body)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 400, "\(body): \(text)")
            #expect(!text.contains("DecodingError") && !text.contains("CodingKeys") && !text.contains("codingPath"), "\(body): \(text)")
        }
    }
}
