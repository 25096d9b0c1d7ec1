#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// What someone holding a stolen admin token gets once it is revoked: the change requests it made are voided in the
/// same step and no reviewer can approve or break glass on them; a request whose author has since lost the editor
/// role is not applied either. Through the real server's API, with the database compared around every refusal.
@Suite(.serialized) struct RevokedCredentialsTests {
    static let newKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

    static func propose(_ deployment: AdminAPITests.Deployment, as admin: String? = "alice", token: String? = nil, key: String = newKey) throws -> Int {
        let proposed = try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: admin,
                                           json: "{\"hashes\": [\"\(key)\"], \"reason\": \"backup key for the renewal\"}", token: token)
        #expect(proposed.status == 202, "\(String(describing: proposed.document))")
        return try #require(((proposed.document as? [String: Any])?["changeRequest"] as? [String: Any])?["id"] as? Int)
    }

    static func message(_ document: Any?) -> String {
        ((document as? [String: Any])?["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    /// An admin's token in a file, for the review commands run on the server's host.
    static func tokenFile(_ deployment: AdminAPITests.Deployment, of admin: String) throws -> String {
        let path = deployment.cli.directory.file("\(admin).token")
        try Data(deployment.tokens[admin]!.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        return path
    }

    @Test func revokingAStolenTokenVoidsTheRequestsItMade() throws {
        let deployment = try AdminAPITests.deploy(.sqlite)
        defer { deployment.stop() }
        let bobToken = try Self.tokenFile(deployment, of: "bob")
        #expect(try deployment.cli.run(["admin", "add", "olga", "--role", "operator"]).status == 0)
        let olga = try deployment.cli.run(["admin", "token", "olga", "--label", "api-test"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        // alice's second token, on another machine, stays valid: only what the stolen one made is voided.
        let laptop = try deployment.cli.run(["admin", "token", "alice", "--label", "laptop"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)

        let stolen = try Self.propose(deployment)
        let kept = try Self.propose(deployment, as: nil, token: laptop, key: "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=")
        let shown = try deployment.call("GET", "/api/v1/change-requests/\(stolen)", as: "bob").document as? [String: Any]
        #expect(shown?["authorToken"] as? String == "api-test", "the request records the token that made it: \(String(describing: shown))")
        let shownText = try deployment.cli.run(["review", "show", String(stolen), "--token-file", bobToken])
        #expect(shownText.stdoutText.contains("author: alice with token 'api-test'"), "\(shownText.combined)")

        let revoked = try deployment.cli.run(["admin", "revoke", "alice", "--label", "api-test"])
        #expect(revoked.status == 0 && revoked.combined.contains("Voided the open change request \(stolen) made with it"), "\(revoked.combined)")

        let before = try deployment.databaseState()
        let servedBefore = try deployment.servedVersion()
        let approval = try deployment.call("POST", "/api/v1/change-requests/\(stolen)/approve", as: "bob", json: "{}")
        #expect(approval.status == 409 && Self.message(approval.document).contains("token 'api-test' of alice"), "\(String(describing: approval.document))")
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(stolen)/break-glass", as: nil, json: "{\"reason\": \"outage\"}", token: olga).status == 409)
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice",
                                    json: "{\"hashes\": [\"\(Self.newKey)\"], \"reason\": \"again\"}").status == 401, "the stolen token itself is refused")
        #expect(try deployment.databaseState() == before)
        #expect(try deployment.servedVersion() == servedBefore)

        // Listed as voided, not as open; the request made with the other token is untouched and can be approved.
        let open = try deployment.call("GET", "/api/v1/change-requests", as: "bob").document as? [[String: Any]]
        #expect(open?.compactMap { $0["id"] as? Int } == [kept], "\(String(describing: open))")
        let all = try deployment.call("GET", "/api/v1/change-requests?all=true", as: "bob").document as? [[String: Any]]
        #expect(all?.first { $0["id"] as? Int == stolen }?["state"] as? String == "voided")
        let listed = try deployment.cli.run(["review", "list", "--all", "--token-file", bobToken])
        #expect(listed.stdoutText.split(separator: "\n").contains { $0.contains("voided") && $0.contains("alice") }, "\(listed.combined)")
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(kept)/approve", as: "bob", json: "{}").status == 200)
    }

    /// The lookup made when a request's head arrives stands for that request for a moment only: someone holding a
    /// stolen token who sends the head, then holds the body back until the token is revoked, gets nothing written.
    @Test func aTokenRevokedWhileItsRequestsBodyIsHeldBackChangesNothing() throws {
        let deployment = try AdminAPITests.deploy(.sqlite)
        defer { deployment.stop() }
        let body = Array("{\"hashes\": [\"\(Self.newKey)\"], \"reason\": \"a key only the thief holds\"}".utf8)
        let head = "POST /api/v1/customers/acme/hosts/api.example.com/pins HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Authorization: Bearer \(deployment.tokens["alice"]!)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let fd = try RawClient.connect(port: deployment.apiPort)
        defer { close(fd) }
        let start = Array(head.utf8) + body.prefix(5)
        #expect(start.withUnsafeBytes { SystemCall.send(fd, $0) } == start.count)
        #expect(try deployment.cli.run(["admin", "revoke", "alice", "--label", "api-test"]).status == 0)
        let before = try deployment.databaseState()
        // Longer than the admission stands (AdminAPI.admissionLifetime, 1 s): the rest of the body arrives after it.
        Thread.sleep(forTimeInterval: 1.5)
        let rest = Array(body.dropFirst(5))
        #expect(rest.withUnsafeBytes { SystemCall.send(fd, $0) } == rest.count)
        let (response, _) = RawClient.readUntilClose(fd, timeout: 20)
        let text = String(decoding: response, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 401"), "the revoked token is looked up again: \(text.prefix(300))")
        #expect(try deployment.databaseState() == before, "nothing was proposed or written")
    }

    @Test func aRequestWhoseAuthorLostTheEditorRoleIsNotApplied() throws {
        let deployment = try AdminAPITests.deploy(.sqlite)
        defer { deployment.stop() }
        let id = try Self.propose(deployment)
        #expect(try deployment.cli.run(["admin", "update", "alice", "--role", "viewer:acme"]).status == 0)

        let before = try deployment.databaseState()
        let approval = try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{}")
        #expect(approval.status == 409 && Self.message(approval.document).contains("may no longer propose"), "\(String(describing: approval.document))")
        #expect(try deployment.databaseState() == before)

        #expect(try deployment.cli.run(["admin", "update", "alice", "--role", "editor:acme"]).status == 0)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{}").status == 200)
    }
}
