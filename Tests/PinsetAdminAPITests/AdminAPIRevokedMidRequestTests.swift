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

    /// eddie's direct edit of acme's pins, with `meanwhile` done to the store while its live chain is checked: refused
    /// as changed meanwhile, and nothing applied.
    static func expectEditRefused(meanwhile: @escaping @Sendable (PinStore) -> Void, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let api = Self.api(deployment, meanwhile: meanwhile)
        let before = try Self.requestsAndPins(deployment)
        let hash = Data(repeating: 9, count: 32).base64EncodedString()
        let answer = await Self.call(api, .editPins, token: deployment.tokens["eddie"]!, parameters: ["customer": Deployment.customer, "hostname": Deployment.host],
                                     body: #"{"hashes": ["\#(hash)"], "reason": "a backup key"}"#)
        #expect(answer.status == 409 && answer.code == .notPermittedAnyMore, "\(answer)", sourceLocation: sourceLocation)
        #expect(try Self.requestsAndPins(deployment) == before, sourceLocation: sourceLocation)
    }

    @Test func anEditWhoseAdminIsDisabledWhileItIsCheckedChangesNothing() async throws {
        try await Self.expectEditRefused { store in try? store.updateAdmin("eddie", grants: nil, disabled: true, actor: "an operator") }
    }

    /// An editor whose role is taken while its direct edit is checked (an editor who runs the host's TLS server can
    /// stretch the check to its timeout) has nothing applied.
    @Test func anEditWhoseAdminLosesTheEditorRoleWhileItIsCheckedChangesNothing() async throws {
        let acme = try CustomerName(Deployment.customer)
        try await Self.expectEditRefused { store in
            try? store.updateAdmin("eddie", grants: [AdminGrant(role: .viewer, customer: acme)], disabled: nil, actor: "an operator")
        }
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

/// An approval's own inputs are held to the rules the rest of the API keeps.
@Suite struct AdminAPIApprovalInputTests {
    typealias Deployment = AdminAPIInProcessTests.Deployment

    /// The reason for skipping the live check goes to the audit log: a control or bidirectional-override character
    /// there could make the entry read differently on a terminal or a page, so it is refused like any other reason's.
    @Test func aSkipReasonWithControlCharactersIsRefusedAndTheRequestStaysOpen() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        for reason in [#"ok\u202e gnirts"#, #"line one\nline two"#] {
            let answer = await deployment.call(.approveChangeRequest, as: "rita", body: #"{"skipLiveCheck": true, "reason": "\#(reason)"}"#)
            #expect(answer.status == 400 && String(decoding: answer.body, as: UTF8.self).contains("control character"), "\(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(try deployment.store.changeRequest(deployment.openRequest)?.state == .open)
        let plain = await deployment.call(.approveChangeRequest, as: "rita", body: #"{"skipLiveCheck": true, "reason": "host down for maintenance"}"#)
        #expect(plain.status == 200, "\(String(decoding: plain.body, as: UTF8.self))")
    }

    /// A report-only window an editor asked for (from the CLI, bounded by the clients' 72 hours) is approved within
    /// the server's own, shorter maximum, or not at all.
    @Test func anApprovedReportOnlyWindowIsHeldToTheServersMaximum() async throws {
        let deployment = try await Deployment()
        defer { deployment.remove() }
        let acme = try CustomerName(Deployment.customer)
        try deployment.store.setRequiresReview(true, for: acme, actor: "test")
        let eddie = try deployment.admin.authenticate(try AdminToken(parsing: deployment.tokens["eddie"]!))
        let tenHours = Int64(Date().timeIntervalSince1970) + 36_000
        guard case .requested(let request) = try deployment.admin.setReportOnly(try Hostname(Deployment.host), of: acme, until: tenHours, reason: "renewal", by: .admin(eddie)) else {
            Issue.record("an editor's window on a reviewed customer is a request"); return
        }
        let api = AdminAPI(admin: deployment.admin, reportOnlyMaximumSeconds: 3600)
        let token = deployment.tokens["rita"]!
        let response = await api.respond(to: AdminAPIRequest(
            method: "POST", target: AdminOperation.approveChangeRequest.target(["id": String(request.id)], query: []),
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: Array("{}".utf8), remoteAddress: "127.0.0.1"))
        #expect(response.status == 409, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(try deployment.store.changeRequest(request.id)?.state == .open)
        #expect(try deployment.admin.reportOnlyWindows(of: acme, visibleTo: .admin(eddie)).isEmpty)
    }
}

/// A database that fails (locked past the busy timeout, here by a real `sqlite3` holding its write lock) is the
/// operator's to see: the caller gets 503 and what to do, not the database's path or its words.
@Suite struct AdminAPIStoreFailureTests {
    @Test func aLockedDatabaseIsAnswered503WithoutItsPathAndLoggedInFull() async throws {
        let deployment = try await AdminAPIInProcessTests.Deployment()
        defer { deployment.remove() }
        let path = deployment.store.path
        let store = try PinStore.open(path: path, busyTimeout: 0.2)
        let logged = LockedValue<[String]>([])
        let api = AdminAPI(admin: Admin(store: store, dataDirectory: DataDirectory(deployment.temporary.file("data")), actor: "test"),
                           onUnexpectedError: { _, error in logged.withLock { $0.append(String(describing: error)) } })
        let holder = try BackgroundProcess("sqlite3", [path, "BEGIN IMMEDIATE;", ".shell sleep 30", "COMMIT;"],
                                           logDirectory: deployment.temporary.path, name: "sqlite3-holder")
        defer { _ = holder.stop() }
        // Held once a write of its own cannot start.
        var held = false
        for _ in 0..<300 where !held {
            held = try ProcessRunner.run("sqlite3", [path, ".timeout 0", "BEGIN IMMEDIATE;", "ROLLBACK;"]).status != 0
            if !held { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(held, "sqlite3 took the write lock")

        let token = deployment.tokens["olga"]!
        let response = await api.respond(to: AdminAPIRequest(
            method: "POST", target: AdminOperation.addCustomer.target([:], query: []),
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: Array(#"{"name": "newco"}"#.utf8), remoteAddress: "127.0.0.1"))
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(response.status == 503 && body.contains("tell the server's operator"), "\(response.status) \(body)")
        #expect(!body.contains(path) && !body.contains("locked"), "the database's path and words stay in the log: \(body)")
        #expect(logged.withLock { $0 }.contains { $0.contains(path) && $0.contains("locked") }, "\(logged.withLock { $0 })")
        _ = holder.stop()
        #expect(try store.pinSet(for: try CustomerName("newco")) == nil, "nothing was written")
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
