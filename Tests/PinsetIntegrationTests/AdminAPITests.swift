import Foundation
import PinsetTestSupport
import Testing

/// The admin API of a real `pinset serve`, through curl, on both store backends: authentication, roles, review,
/// the live-chain check at approval, and what each refusal leaves behind (nothing: the database is compared).
@Suite(.serialized) struct AdminAPITests {
    enum Backend: String, CaseIterable, Sendable {
        case sqlite, postgreSQL
    }

    struct Deployment {
        let cli: PinsetCLI
        let server: RunningServer
        let apiPort: Int
        let tokens: [String: String]
        let postgres: (url: String, port: Int, environment: [String: String])?

        func stop() {
            server.stop()
            cli.remove()
        }

        /// curl against the API as `admin` (nil: no token), from `source` (a loopback address).
        func call(_ method: String, _ path: String, as admin: String?, json body: String? = nil, token: String? = nil,
                  from source: String = "127.0.0.1") throws -> (status: Int, headers: [String: String], document: Any?) {
            var extra = ["-X", method, "--interface", source]
            if let value = token ?? admin.map({ tokens[$0]! }) { extra += ["-H", "Authorization: Bearer \(value)"] }
            if let body {
                // From a file: a body can be longer than one command-line argument may be.
                let file = cli.directory.file("body-\(UUID().uuidString.prefix(8)).json")
                try Data(body.utf8).write(to: URL(fileURLWithPath: file))
                extra += ["-H", "Content-Type: application/json", "--data-binary", "@\(file)"]
            }
            let response = try CurlResponse.get("http://127.0.0.1:\(apiPort)\(path)", extra, in: cli.directory)
            return (response.status, response.headers, try? JSONSerialization.jsonObject(with: Data(response.body)))
        }

        /// Every row that a refused call could have touched; the figures the server itself rewrites are left out.
        func databaseState() throws -> String {
            if let postgres {
                let database = String(postgres.url.split(separator: "/").last ?? "")
                let dumped = try ProcessRunner.run("\(TestPostgresServer.binDirectory)/pg_dump", [
                    "--data-only", "--inserts", "--exclude-table-data=uptake_*", "-h", "127.0.0.1", "-p", String(postgres.port),
                    "-U", TestPostgresServer.user, database,
                ], environment: postgres.environment, timeout: 60)
                guard dumped.status == 0 else { throw Failure("pg_dump: \(dumped.combined)") }
                // pg_dump frames its output with a random \restrict key.
                return dumped.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }.joined(separator: "\n")
            }
            return try cli.databaseDump()
        }

        /// The content version of the bundle the server serves for acme, read after verifying its signature.
        func servedVersion() throws -> Int? {
            try server.verifiedVersion(of: "acme", trustedBy: cli)
        }
    }

    /// acme (review required) with one unmonitored host; alice edits and reviews acme, bob reviews acme, carol
    /// reviews globex, dave views acme. The API allows three failed authentications a minute per address unless
    /// told otherwise.
    static func deploy(_ backend: Backend, failedAuthenticationsPerMinute: Int = 3, refusalsPerAdminPerMinute: Int = 20) throws -> Deployment {
        let databaseURL = backend == .postgreSQL ? try SharedTestPostgres.freshDatabase() : nil
        let environment = backend == .postgreSQL ? SharedTestPostgres.environment : [:]
        let cli = try PinsetCLI.initialized(databaseURL: databaseURL, environment: environment)
        for arguments in [
            ["customer", "add", "acme"], ["customer", "add", "globex"], ["host", "add", "acme", "api.example.com"],
            ["host", "update", "acme", "api.example.com", "--unmonitored", "example host, not reachable from tests"],
            ["pin", "add", "acme", "api.example.com", "--hash", "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="],
            ["admin", "add", "alice", "--role", "editor:acme", "--role", "reviewer:acme"], ["admin", "add", "bob", "--role", "reviewer:acme"],
            ["admin", "add", "carol", "--role", "reviewer:globex"], ["admin", "add", "dave", "--role", "viewer:acme"],
            ["admin", "require-review", "acme"],
        ] {
            let result = try cli.run(arguments)
            guard result.status == 0 else { throw Failure("pinset \(arguments.joined(separator: " ")): \(result.combined)") }
        }
        var tokens: [String: String] = [:]
        for name in ["alice", "bob", "carol", "dave"] {
            let made = try cli.run(["admin", "token", name, "--label", "api-test"])
            guard made.status == 0 else { throw Failure("admin token: \(made.combined)") }
            tokens[name] = made.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let apiPort = try FreePort.pick()
        let server = try RunningServer(cli: cli, extraConfiguration: [
            "api": ["host": "127.0.0.1", "port": apiPort, "failedAuthenticationsPerMinute": failedAuthenticationsPerMinute,
                    "refusalsPerAdminPerMinute": refusalsPerAdminPerMinute], "resignIntervalSeconds": 5,
        ])
        let postgres = try databaseURL.map { url in (url: url, port: try SharedTestPostgres.server().port, environment: environment) }
        return Deployment(cli: cli, server: server, apiPort: apiPort, tokens: tokens, postgres: postgres)
    }

    @Test(arguments: Backend.allCases) func aChangeRequestTravelsFromEditorToReviewerToTheServedBundle(_ backend: Backend) async throws {
        let deployment = try Self.deploy(backend)
        defer { deployment.stop() }
        let newKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

        let document = try deployment.call("GET", "/api/v1/openapi.json", as: nil)
        #expect(document.status == 200 && (document.document as? [String: Any])?["openapi"] as? String == "3.0.3")
        let me = try deployment.call("GET", "/api/v1/me", as: "bob")
        #expect((me.document as? [String: Any])?["roles"] as? [String] == ["reviewer:acme"])
        let customers = try deployment.call("GET", "/api/v1/customers", as: "carol")
        #expect((customers.document as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["globex"], "carol sees only globex")
        // Rotation readiness, as 'pinset rotation status' reports it, for who may see the customer.
        let rotation = try deployment.call("GET", "/api/v1/customers/acme/rotation", as: "dave")
        let rotationHost = (rotation.document as? [[String: Any]])?.first
        #expect(rotation.status == 200 && rotationHost?["hostname"] as? String == "api.example.com" && rotationHost?["verdict"] as? String == "no-next-key",
                "\(String(describing: rotation.document))")
        #expect(try deployment.call("GET", "/api/v1/customers/acme/rotation", as: "carol").status == 404)
        #expect(try deployment.call("GET", "/api/v1/customers/acme/rotation?minimumShare=2", as: "dave").status == 400)
        // A key without a host: each host's verdict is about that key (here pinned, but not as a next key).
        let keyed = try deployment.call("GET", "/api/v1/customers/acme/rotation?key=r%2FmIkG3eEpVdm%2Bu%2Fko%2FcwxzOMo1bk4TyHIlByibiA5E%3D", as: "dave")
        #expect(keyed.status == 200 && (keyed.document as? [[String: Any]])?.first?["hostname"] as? String == "api.example.com", "\(String(describing: keyed.document))")
        // Reported pin failures, as 'pinset reports' shows them (none reported here).
        let reports = try deployment.call("GET", "/api/v1/customers/acme/reports?since=7d", as: "dave")
        #expect(reports.status == 200 && (reports.document as? [Any])?.isEmpty == true, "\(String(describing: reports.document))")
        #expect(try deployment.call("GET", "/api/v1/customers/acme/reports", as: "carol").status == 404)
        #expect(try deployment.call("GET", "/api/v1/customers/acme/reports?since=forever", as: "dave").status == 400)
        // The customer's part of the server's status, as the dashboard shows it.
        let health = try deployment.call("GET", "/api/v1/customers/acme/health", as: "dave")
        let healthDocument = health.document as? [String: Any]
        #expect(health.status == 200 && healthDocument?["served"] as? Bool == true && healthDocument?["monitoringEnabled"] as? Bool == false
                && healthDocument?["failingHosts"] as? Int == 0 && (healthDocument?["signingIdentity"] as? [String: Any])?["identity"] as? String == "default",
                "\(String(describing: health.document))")
        #expect(try deployment.call("GET", "/api/v1/customers/acme/health", as: "carol").status == 404)
        #expect(try deployment.call("GET", "/api/v1/customers/acme/health", as: nil).status == 401)

        let before = try deployment.databaseState()
        let servedBefore = try #require(try deployment.servedVersion())
        // Refused before anything is stored: no token, a viewer, an editor of another customer, bad input.
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: nil, json: "{\"hashes\": [\"\(newKey)\"]}").status == 401)
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "dave", json: "{\"hashes\": [\"\(newKey)\"], \"reason\": \"r\"}").status == 403)
        #expect(try deployment.call("POST", "/api/v1/customers/globex/hosts/api.example.com/pins", as: "alice", json: "{\"hashes\": [\"\(newKey)\"], \"reason\": \"r\"}").status == 403)
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice", json: "{\"hashes\": [\"\(newKey)\"]}").status == 400, "a request needs a reason")
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice", json: "{\"hashes\": \"\(newKey)\", \"reason\": \"r\"}").status == 400)
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice", json: "{\"hashes\": [\"\(newKey)\"], \"reason\": \"r\", \"actor\": \"bob\"}").status == 400,
                "no self-declared actor")
        #expect(try deployment.databaseState() == before)

        let proposed = try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice",
                                           json: "{\"hashes\": [\"\(newKey)\"], \"reason\": \"backup key for the renewal\"}")
        #expect(proposed.status == 202, "\(String(describing: proposed.document))")
        let id = try #require(((proposed.document as? [String: Any])?["changeRequest"] as? [String: Any])?["id"] as? Int)
        let proposedState = try deployment.databaseState()

        // Refused approvals change nothing: the author, a reviewer of another customer, a viewer, a bad token.
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "alice", json: "{}").status == 409)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "carol", json: "{}").status == 404)
        #expect(try deployment.call("GET", "/api/v1/change-requests/\(id)", as: "carol").status == 404)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "dave", json: "{}").status == 403)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: nil, json: "{}", token: "pinset_\(String(repeating: "B", count: 43))").status == 401)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{\"skipLiveCheck\": true").status == 400, "malformed JSON")
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{\"skipLiveCheck\": \"yes\", \"reason\": \"r\"}").status == 400,
                "a string is not a boolean")
        #expect(try deployment.databaseState() == proposedState)

        let shown = try deployment.call("GET", "/api/v1/change-requests/\(id)", as: "dave")
        let check = ((shown.document as? [String: Any])?["liveCheck"] as? [[String: Any]])?.first
        #expect(check?["summary"] as? String == "not checked: the host is unmonitored (example host, not reachable from tests)", "\(String(describing: shown.document))")

        let approved = try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{}")
        #expect(approved.status == 200, "\(String(describing: approved.document))")
        let version = try #require((approved.document as? [String: Any])?["appliedVersion"] as? Int)
        #expect(version > servedBefore)
        let audit = try deployment.call("GET", "/api/v1/customers/acme/audit?limit=1", as: "dave")
        let entry = (audit.document as? [[String: Any]])?.first
        #expect(entry?["actor"] as? String == "bob" && (entry?["details"] as? String)?.contains("change request \(id) by alice, approved by bob") == true)

        // Replayed: nothing happens.
        let applied = try deployment.databaseState()
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{}").status == 409)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/reject", as: "bob", json: "{\"note\": \"late\"}").status == 409)
        #expect(try deployment.databaseState() == applied)

        // The running server signs and serves the new version.
        var served = servedBefore
        for _ in 0..<100 where served < version {
            served = try deployment.servedVersion() ?? served
            if served < version { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(served == version)

        // A report-only window, on a customer that requires review: an editor asks, a reviewer approves.
        let until = Int(Date().timeIntervalSince1970) + 3600
        let window = "{\"until\": \(until), \"reason\": \"renewal served an unpinned key, INC-4711\"}"
        #expect(try deployment.call("PUT", "/api/v1/customers/acme/hosts/api.example.com/report-only", as: "dave", json: window).status == 403)
        let asked = try deployment.call("PUT", "/api/v1/customers/acme/hosts/api.example.com/report-only", as: "alice", json: window)
        let askedDocument = asked.document as? [String: Any]
        #expect(asked.status == 202 && askedDocument?["reportOnly"] as? Bool == false, "\(String(describing: asked.document))")
        let request = try #require(askedDocument?["changeRequest"] as? [String: Any])
        #expect((request["edits"] as? [[String: Any]])?.first?["reportOnlyUntil"] as? String != nil, "\(request)")
        let reportOnlyID = try #require(request["id"] as? Int)
        let customerBefore = try deployment.call("GET", "/api/v1/customers/acme", as: "dave")
        #expect(!"\(String(describing: customerBefore.document))".contains("\(until)"), "nothing is set before review")
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(reportOnlyID)/approve", as: "alice", json: "{}").status == 409)
        let reportOnly = try deployment.call("POST", "/api/v1/change-requests/\(reportOnlyID)/approve", as: "bob", json: "{}")
        #expect(reportOnly.status == 200, "\(String(describing: reportOnly.document))")
        let reportOnlyVersion = try #require((reportOnly.document as? [String: Any])?["appliedVersion"] as? Int)
        for _ in 0..<100 where served < reportOnlyVersion {
            served = try deployment.servedVersion() ?? served
            if served < reportOnlyVersion { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(served == reportOnlyVersion, "the served bundle announces the window")
        let windowAudit = try deployment.call("GET", "/api/v1/customers/acme/audit?limit=1", as: "dave")
        let windowEntry = (windowAudit.document as? [[String: Any]])?.first
        #expect(windowEntry?["action"] as? String == "host.report-only" && (windowEntry?["details"] as? String)?.contains("approved by bob") == true,
                "\(String(describing: windowAudit.document))")
    }

    /// Break-glass: only an operator applies a request without review, with a reason; the running server shows it
    /// in /status and /metrics until another admin acknowledges it. Every refused call leaves the database as it was.
    @Test(arguments: Backend.allCases) func anOperatorsBreakGlassShowsOnTheServerUntilAnotherAdminAcknowledgesIt(_ backend: Backend) async throws {
        let deployment = try Self.deploy(backend)
        defer { deployment.stop() }
        #expect(try deployment.cli.run(["admin", "add", "olga", "--role", "operator"]).status == 0)
        let olga = try deployment.cli.run(["admin", "token", "olga", "--label", "api-test"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        func status() throws -> [String: Any] {
            let response = try CurlResponse.get("\(deployment.server.baseURL)/status", in: deployment.cli.directory)
            return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
        }
        func unacknowledgedGauge() throws -> Double? {
            let metrics = try CurlResponse.get("\(deployment.server.baseURL)/metrics", in: deployment.cli.directory)
            let line = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("pinset_break_glass_unacknowledged ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        #expect(try unacknowledgedGauge() == 0)

        let proposed = try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice",
                                           json: "{\"hashes\": [\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"], \"reason\": \"the CA reissued with a new key\"}")
        let id = try #require(((proposed.document as? [String: Any])?["changeRequest"] as? [String: Any])?["id"] as? Int)
        let open = try deployment.databaseState()
        // Not an operator (alice wrote it and reviews acme; bob reviews acme; dave views it), or no reason: refused.
        for admin in ["alice", "bob", "dave"] {
            #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/break-glass", as: admin, json: "{\"reason\": \"outage\"}").status == 403, "\(admin)")
        }
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/break-glass", as: nil, json: "{\"reason\": \" \"}", token: olga).status == 400)
        #expect(try deployment.call("POST", "/api/v1/change-requests/\(id)/break-glass", as: nil, json: "{}", token: olga).status == 400)
        #expect(try deployment.databaseState() == open)

        let applied = try deployment.call("POST", "/api/v1/change-requests/\(id)/break-glass", as: nil, json: "{\"reason\": \"outage, no reviewer reachable\"}", token: olga)
        #expect(applied.status == 200, "\(String(describing: applied.document))")
        let version = try #require((applied.document as? [String: Any])?["appliedVersion"] as? Int)
        let entry = (try deployment.call("GET", "/api/v1/customers/acme/audit?limit=1", as: "dave").document as? [[String: Any]])?.first
        #expect(entry?["actor"] as? String == "olga" && (entry?["details"] as? String)?.contains("WITHOUT REVIEW by olga (break-glass): outage, no reviewer reachable") == true)

        // The server shows it: /status lists it and warns first, the gauge counts it.
        var shown: [[String: Any]] = []
        for _ in 0..<50 where shown.isEmpty {
            shown = try status()["breakGlass"] as? [[String: Any]] ?? []
            if shown.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(shown.count == 1 && shown.first?["changeRequest"] as? Int == id && shown.first?["appliedBy"] as? String == "olga" && shown.first?["appliedVersion"] as? Int == version)
        #expect((try status()["warnings"] as? [String])?.first?.contains("WITHOUT REVIEW by olga") == true)
        #expect(try unacknowledgedGauge() == 1)
        let listed = try deployment.call("GET", "/api/v1/break-glass", as: "dave").document as? [[String: Any]]
        #expect(listed?.count == 1, "a viewer of acme sees it")
        let event = try #require(listed?.first?["id"] as? Int)
        #expect((try deployment.call("GET", "/api/v1/break-glass", as: "carol").document as? [Any])?.isEmpty == true, "carol has no role for acme")

        // Not by who applied it, not by who wrote the request (alice reviews acme too), not by a viewer, not by a
        // reviewer of another customer.
        let unacknowledged = try deployment.databaseState()
        #expect(try deployment.call("POST", "/api/v1/break-glass/\(event)/acknowledge", as: nil, json: "{}", token: olga).status == 409)
        let byAuthor = try deployment.call("POST", "/api/v1/break-glass/\(event)/acknowledge", as: "alice", json: "{\"note\": \"fine by me\"}")
        #expect(byAuthor.status == 409 && "\(byAuthor.document ?? "")".contains("wrote change request \(id)"), "\(String(describing: byAuthor.document))")
        #expect((listed?.first?["requestAuthor"] as? String) == "alice")
        #expect(try deployment.call("POST", "/api/v1/break-glass/\(event)/acknowledge", as: "dave", json: "{}").status == 403)
        #expect(try deployment.call("POST", "/api/v1/break-glass/\(event)/acknowledge", as: "carol", json: "{}").status == 404)
        #expect(try deployment.databaseState() == unacknowledged)

        let acknowledged = try deployment.call("POST", "/api/v1/break-glass/\(event)/acknowledge", as: "bob", json: "{\"note\": \"checked the new key with the CA\"}")
        #expect(acknowledged.status == 200 && (acknowledged.document as? [String: Any])?["acknowledgedBy"] as? String == "bob")
        var cleared = false
        for _ in 0..<50 where !cleared {
            cleared = try status()["breakGlass"] == nil
            if !cleared { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(cleared)
        #expect(try unacknowledgedGauge() == 0)
        #expect(try deployment.call("POST", "/api/v1/break-glass/\(event)/acknowledge", as: "bob", json: "{}").status == 409, "acknowledged once")
    }

    /// Customers, hosts and revocation floors through the API, each by the role it needs, audited under the
    /// admin's name; a dry run of a pin edit stores nothing. Every refusal leaves the database as it was.
    @Test(arguments: Backend.allCases) func operatorsAddCustomersAndRaiseFloorsEditorsAddHostsAndDryRunEdits(_ backend: Backend) throws {
        let deployment = try Self.deploy(backend)
        defer { deployment.stop() }
        #expect(try deployment.cli.run(["admin", "add", "ops", "--role", "operator"]).status == 0)
        let ops = try deployment.cli.run(["admin", "token", "ops", "--label", "api-test"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        func asOps(_ method: String, _ path: String, _ body: String) throws -> (status: Int, headers: [String: String], document: Any?) {
            try deployment.call(method, path, as: nil, json: body, token: ops)
        }

        // Refused, each leaving the database as it was.
        let before = try deployment.databaseState()
        #expect(try deployment.call("POST", "/api/v1/customers", as: "alice", json: #"{"name": "initech"}"#).status == 403, "an editor adds no customers")
        #expect(try asOps("POST", "/api/v1/customers", #"{"name": "acme"}"#).status == 409, "names are unique")
        #expect(try asOps("POST", "/api/v1/customers", #"{"name": "bad name"}"#).status == 400)
        #expect(try asOps("POST", "/api/v1/customers", #"{"name": "initech", "requiresReview": null}"#).status == 400, "null is not a value")
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts", as: "dave", json: #"{"hostname": "www.example.com"}"#).status == 403, "a viewer adds no hosts")
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts", as: "alice", json: #"{"hostname": "co.uk", "includeSubdomains": true}"#).status == 409,
                "include-subdomains on a public suffix")
        #expect(try deployment.call("POST", "/api/v1/customers/globex/hosts", as: "alice", json: #"{"hostname": "www.example.com"}"#).status == 404)
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts", as: "alice", json: #"{"hostname": "example.com", "includeSubdomains": true}"#).status == 403,
                "on a customer that requires review, only an operator sets include-subdomains: a reviewer sees pins, not that setting")
        #expect(try deployment.call("POST", "/api/v1/revocation-floor", as: "alice", json: "{}").status == 403, "only operators raise floors")
        #expect(try deployment.databaseState() == before)

        // A dry run shows the edit and its live-chain check, and stores nothing.
        let dryRun = try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice",
                                         json: #"{"hashes": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], "dryRun": true}"#)
        let previewed = ((dryRun.document as? [String: Any])?["hosts"] as? [[String: Any]])?.first
        #expect(dryRun.status == 200 && previewed?["add"] as? [String] == ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
                && (previewed?["summary"] as? String)?.hasPrefix("not checked: the host is unmonitored") == true, "\(String(describing: dryRun.document))")
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "dave", json: #"{"hashes": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], "dryRun": true}"#).status == 403,
                "a viewer's dry run would still make the server connect out")
        #expect(try deployment.databaseState() == before)

        // An operator adds a customer (review required by default), an editor of it a host, audited by name.
        let added = try asOps("POST", "/api/v1/customers", #"{"name": "initech"}"#)
        #expect(added.status == 201 && (added.document as? [String: Any])?["requiresReview"] as? Bool == true, "\(String(describing: added.document))")
        #expect(try deployment.cli.run(["admin", "update", "alice", "--role", "editor:acme", "--role", "reviewer:acme", "--role", "editor:initech"]).status == 0)
        let host = try deployment.call("POST", "/api/v1/customers/initech/hosts", as: "alice", json: #"{"hostname": "api.initech.example", "port": 8443}"#)
        #expect(host.status == 201 && (host.document as? [String: Any])?["port"] as? Int == 8443, "\(String(describing: host.document))")
        let audit = try deployment.call("GET", "/api/v1/customers/initech/audit?limit=5", as: nil, json: nil, token: ops)
        let actors = (audit.document as? [[String: Any]])?.compactMap { $0["actor"] as? String }
        #expect(actors == ["alice", "ops"], "\(String(describing: audit.document))")

        // An operator raises the default identity's floor: every customer signed by it gets a new version.
        let floor = try asOps("POST", "/api/v1/revocation-floor", "{}")
        let raised = floor.document as? [String: Any]
        #expect(floor.status == 200 && Set(raised?["customersWithNewVersion"] as? [String] ?? []) == ["acme", "globex", "initech"], "\(String(describing: floor.document))")
        #expect(raised?["previousSignerRevoked"] as? Bool == false, "no earlier signer is known, so none was revoked")
        #expect(try deployment.call("GET", "/api/v1/customers/acme/audit?limit=1", as: "dave").document.flatMap { ($0 as? [[String: Any]])?.first?["actor"] as? String } == "ops")
    }

    /// Customer and host settings, removals, next keys and signing identities through the API: operators for
    /// what is deployment-wide or, on a customer that requires review, what a change request would not show its
    /// reviewer; editors for the rest. Every refusal leaves the database as it was.
    @Test(arguments: Backend.allCases) func operatorsAndEditorsChangeCustomersHostsNextKeysAndIdentities(_ backend: Backend) throws {
        let deployment = try Self.deploy(backend)
        defer { deployment.stop() }
        #expect(try deployment.cli.run(["admin", "add", "ops", "--role", "operator"]).status == 0)
        let ops = try deployment.cli.run(["admin", "token", "ops", "--label", "api-test"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        func asOps(_ method: String, _ path: String, _ body: String? = nil) throws -> (status: Int, headers: [String: String], document: Any?) {
            try deployment.call(method, path, as: nil, json: body, token: ops)
        }
        let spare = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let host = "/api/v1/customers/acme/hosts/api.example.com"
        let anchorBefore = (try deployment.call("GET", "/api/v1/customers/acme/identity", as: "dave").document as? [String: Any])?["anchorBase64"] as? String

        let before = try deployment.databaseState()
        for (method, path, admin, body, status, why) in [
            ("PATCH", "/api/v1/customers/acme", "alice", #"{"servesLegacyClients": true}"#, 403, "an editor changes no customer settings"),
            ("PATCH", "/api/v1/customers/acme", nil, "{}", 409, "an update that changes nothing"),
            ("PATCH", "/api/v1/customers/acme", nil, #"{"requiresReview": "no"}"#, 400, "not a boolean"),
            ("DELETE", "/api/v1/customers/acme", "alice", nil, 403, "an editor removes no customers"),
            ("DELETE", "/api/v1/customers/acme", "carol", nil, 404, "a customer carol may not see"),
            ("DELETE", host, "alice", nil, 403, "on a customer that requires review, apps would stop pinning the host unreviewed"),
            ("DELETE", host, "dave", nil, 403, "a viewer removes nothing"),
            ("PATCH", host, "alice", #"{"includeSubdomains": true}"#, 403, "include-subdomains on a customer that requires review"),
            ("PATCH", host, "alice", #"{"port": 0}"#, 400, "no port 0"),
            ("PATCH", host, "alice", #"{"unmonitored": "x", "monitored": true}"#, 409, "both at once"),
            ("PATCH", host, "alice", #"{"monitored": true, "port": 8443}"#, 409, "monitoring and settings in one request"),
            ("POST", host + "/next-keys", "alice", #"{"hashes": ["\#(spare)"], "reason": "next"}"#, 403, "a next key is a pin apps accept: unreviewed, an operator's"),
            ("POST", host + "/next-keys", nil, #"{"hashes": ["\#(spare)"]}"#, 400, "no reason"),
            ("POST", host + "/next-keys", nil, #"{"hashes": ["not-a-hash"], "reason": "next"}"#, 400, "not a hash"),
            ("POST", host + "/next-keys", nil, #"{"reason": "next"}"#, 400, "no key"),
            ("POST", "/api/v1/customers/acme/identity", "alice", #"{"keyType": "p256", "replaceTrustAnchor": true}"#, 403, "identities are an operator's"),
            ("POST", "/api/v1/customers/acme/identity", nil, #"{"keyType": "p256"}"#, 409, "a new trust anchor needs replaceTrustAnchor"),
            ("POST", "/api/v1/customers/acme/identity", nil, #"{"keyType": "dsa"}"#, 400, "no such key type"),
            ("POST", "/api/v1/customers/acme/identity", nil, #"{"keyType": "p256", "replaceTrustAnchor": true, "validityDays": 1}"#, 400,
             "an identity that expires within a bundle lifetime and a re-sign interval would stop its customer's signing"),
            ("POST", host + "/complete-rotation", "alice", #"{"reason": "renewed"}"#, 403, "retiring pins unreviewed is an operator's"),
            ("POST", host + "/complete-rotation", nil, #"{"reason": "renewed"}"#, 409, "the live chain cannot be fetched"),
            ("PATCH", host, "alice", #"{"port": 8443}"#, 403, "a host's settings on a customer that requires review are an operator's"),
            ("PATCH", host, "alice", #"{"unmonitored": "no checks, please"}"#, 403, "fewer live checks, unreviewed"),
            ("PATCH", host, nil, #"{"unmonitored": "line\nbreak"}"#, 400, "a control character in the reason"),
            ("POST", host + "/next-keys", nil, #"{"hashes": ["\#(spare)"], "reason": "next", "label": "a\u001b[2Jb"}"#, 400, "a control character in the label"),
            ("POST", host + "/complete-rotation", "dave", #"{"reason": "renewed"}"#, 403, "a viewer completes nothing"),
        ] as [(String, String, String?, String?, Int, String)] {
            let answer = admin.map { try? deployment.call(method, path, as: $0, json: body) } ?? (try? asOps(method, path, body))
            #expect(answer?.status == status, "\(method) \(path) as \(admin ?? "ops"): \(why): \(String(describing: answer?.document))")
        }
        #expect(try deployment.databaseState() == before)

        // An editor may only add checks: the host is monitored again. Then its new port is checked against a live
        // chain, which cannot be reached; unmonitored, an operator moves it.
        let monitored = try deployment.call("PATCH", host, as: "alice", json: #"{"monitored": true}"#)
        #expect(monitored.status == 200 && (monitored.document as? [String: Any])?["changed"] as? Bool == true, "\(String(describing: monitored.document))")
        let checked = try asOps("PATCH", host, #"{"port": 9443}"#)
        #expect(checked.status == 409 && ((checked.document as? [String: Any])?["error"] as? [String: Any])?["message"].map { "\($0)" }?.contains("live chain") == true,
                "a monitored host's new port is checked against its live chain, which cannot be reached: \(String(describing: checked.document))")
        #expect(try asOps("PATCH", host, #"{"unmonitored": "example host, not reachable from tests"}"#).status == 200)
        let moved = try asOps("PATCH", host, #"{"port": 8443}"#)
        #expect(moved.status == 200 && (moved.document as? [String: Any])?["port"] as? Int == 8443 && (moved.document as? [String: Any])?["changed"] as? Bool == true,
                "\(String(describing: moved.document))")

        // An operator pins a next key; a viewer sees whether it may go live.
        let next = try asOps("POST", host + "/next-keys", #"{"hashes": ["\#(spare)"], "reason": "key of the renewal after next"}"#)
        #expect(next.status == 200 && (next.document as? [String: Any])?["added"] as? [String] == [spare], "\(String(describing: next.document))")
        let readiness = try deployment.call("GET", "/api/v1/customers/acme/rotation?hostname=api.example.com&key=\(spare.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", as: "dave")
        let verdict = (readiness.document as? [[String: Any]])?.first?["verdict"] as? String
        #expect(readiness.status == 200 && verdict == "not-yet", "\(String(describing: readiness.document))")

        // A new own key made on the server: the identity a viewer sees changes, and no path of the server shows.
        let rotated = try asOps("POST", "/api/v1/customers/acme/identity", #"{"keyType": "p256", "replaceTrustAnchor": true}"#)
        let identity = rotated.document as? [String: Any]
        #expect(rotated.status == 200 && identity?["signer"] as? String == "own" && identity?["usable"] as? Bool == true, "\(String(describing: rotated.document))")
        #expect(identity?["anchorBase64"] as? String != anchorBefore && identity?["keyFile"] == nil)

        // Settings, the last host and customers, as an operator.
        let settings = try asOps("PATCH", "/api/v1/customers/globex", #"{"servesLegacyClients": true, "requiresReview": true}"#)
        #expect(settings.status == 200 && (settings.document as? [String: Any])?["requiresReview"] as? Bool == true, "\(String(describing: settings.document))")
        #expect(try asOps("DELETE", host).status == 409, "the last host needs allowLastHost")
        #expect(try asOps("DELETE", host + "?allowLastHost=true").status == 200)
        let audit = try asOps("GET", "/api/v1/customers/acme/audit?limit=10")
        let actors = (audit.document as? [[String: Any]])?.compactMap { $0["actor"] as? String } ?? []
        #expect(Array(actors.prefix(6)) == ["ops", "ops", "ops", "ops", "ops", "alice"], "removal, identity, next key, port and monitoring off by ops; monitoring on by alice: \(actors)")
        let removed = try asOps("DELETE", "/api/v1/customers/acme")
        #expect(removed.status == 200 && (removed.document as? [String: Any])?["ownKeyKept"] as? Bool == true, "\(String(describing: removed.document))")
        #expect(try deployment.call("GET", "/api/v1/customers/acme", as: "dave").status == 404)
    }

    @Test func failedAuthenticationsAreThrottledPerAddress() throws {
        let deployment = try Self.deploy(.sqlite)
        defer { deployment.stop() }
        let wrong = "pinset_\(String(repeating: "C", count: 43))"
        for _ in 0..<3 {
            #expect(try deployment.call("GET", "/api/v1/me", as: nil, token: wrong, from: "127.0.0.2").status == 401)
        }
        let throttled = try deployment.call("GET", "/api/v1/me", as: nil, token: wrong, from: "127.0.0.2")
        #expect(throttled.status == 429, "the address guessed too often")
        #expect(Int(throttled.headers["retry-after"] ?? "") ?? 0 > 0)
        #expect(try deployment.call("GET", "/api/v1/me", as: nil, from: "127.0.0.2").status == 429, "no token says no more than a wrong one")
        #expect(try deployment.call("GET", "/api/v1/me", as: "bob", from: "127.0.0.2").status == 200, "guesses from a shared address do not lock its admins out")
        #expect(try deployment.call("GET", "/api/v1/me", as: nil, token: wrong, from: "127.0.0.3").status == 401, "other addresses are counted on their own")

        // A body over the limit is refused at once, before it has all been sent.
        let large = "{\"hashes\": [], \"reason\": \"" + String(repeating: "x", count: 300_000) + "\"}"
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice", json: large).status == 413)
        // Control characters that would forge audit lines on a terminal are refused.
        #expect(try deployment.call("POST", "/api/v1/customers/acme/hosts/api.example.com/pins", as: "alice",
                                    json: "{\"hashes\": [\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"], \"reason\": \"ok\\n2026 approved by bob\"}").status == 400)
        // The tokens never reach the log.
        let log = deployment.server.process.stdout + deployment.server.process.stderr
        #expect(!deployment.tokens.values.contains { log.contains($0) } && !log.contains(wrong))
    }

    /// A token probing for access it lacks (roles, customers it may not see) is slowed down and logged, per admin:
    /// its holder alone is throttled, from any address, and other admins are not.
    @Test func anAdminRefusedTooOftenIsThrottledAndLogged() throws {
        let deployment = try Self.deploy(.sqlite, refusalsPerAdminPerMinute: 3)
        defer { deployment.stop() }
        for _ in 0..<5 {
            #expect(try deployment.call("GET", "/api/v1/customers/acme/certificates", as: "dave").status == 404, "an endpoint this server lacks")
        }
        #expect(try deployment.call("GET", "/api/v1/customers/acme", as: "dave").status == 200, "a missing endpoint reveals nothing and is not counted")
        #expect(try deployment.call("POST", "/api/v1/change-requests/1/approve", as: "dave", json: "{}").status == 404, "no request 1")
        #expect(try deployment.call("GET", "/api/v1/customers/globex", as: "dave").status == 404, "not dave's customer")
        #expect(try deployment.call("POST", "/api/v1/customers", as: "dave", json: #"{"name": "initech"}"#).status == 403)
        let throttled = try deployment.call("GET", "/api/v1/customers/acme", as: "dave", from: "127.0.0.2")
        #expect(throttled.status == 429 && Int(throttled.headers["retry-after"] ?? "") ?? 0 > 0, "dave, from any address: \(String(describing: throttled.document))")
        #expect(try deployment.call("GET", "/api/v1/customers/acme", as: "bob").status == 200, "another admin is not affected")
        #expect(try deployment.call("GET", "/api/v1/me", as: "alice").status == 200)
        let log = deployment.server.process.stdout + deployment.server.process.stderr
        #expect(log.contains("refused too often") && log.contains("dave"), "\(log.suffix(2000))")
        #expect(!deployment.tokens.values.contains { log.contains($0) })
    }

    @Test func offLoopbackTheAPIServesOnlyTLSWithAPrivateKey() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let pki = try CLIConnectToTests.serverPKI(in: cli.directory)
        func serve(_ api: [String: Any]) throws -> ProcessRunner.Output {
            let path = cli.directory.file("config-\(UUID().uuidString.prefix(6)).json")
            try JSONSerialization.data(withJSONObject: ["port": 0, "dataDirectory": cli.dataDir, "api": api]).write(to: URL(fileURLWithPath: path))
            return try ProcessRunner.run(PinsetCLI.binary, ["serve", "--config", path], timeout: 30)
        }
        for host in ["0.0.0.0", "127.example.net"] {
            let plain = try serve(["host": host, "port": try FreePort.pick()])
            #expect(plain.status != 0 && plain.stderr.contains("without TLS"), "\(host): \(plain.combined)")
        }
        // The key as openssl wrote it, readable by others.
        chmod(pki.named.key, 0o644)
        let openKey = try serve(["host": "127.0.0.1", "port": try FreePort.pick(), "certificate": pki.named.cert, "privateKey": pki.named.key])
        #expect(openKey.status != 0 && openKey.stderr.contains("chmod 600"), "\(openKey.combined)")
        chmod(pki.named.key, 0o600)

        let port = try FreePort.pick()
        let server = try RunningServer(cli: cli, extraConfiguration: ["api": ["host": "127.0.0.1", "port": port, "certificate": pki.named.cert, "privateKey": pki.named.key]])
        defer { server.stop() }
        let overTLS = try CurlResponse.get("https://api.example.test:\(port)/api/v1/openapi.json",
                                           ["--resolve", "api.example.test:\(port):127.0.0.1", "--cacert", pki.ca], in: cli.directory)
        #expect(overTLS.status == 200)
        let cleartext = try ProcessRunner.run("curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/api/v1/openapi.json"])
        #expect(cleartext.status != 0, "a plain HTTP request gets no answer from the TLS listener: \(cleartext.combined)")
    }

    /// schemathesis (PyPI), an independent reader of OpenAPI documents, generates requests from the document the
    /// server serves (valid, invalid, unauthenticated, other methods, sequences) and checks every answer against
    /// it: no 5xx, statuses, content types and bodies as documented, invalid input refused. Left out is only its
    /// check that every schema-valid request succeeds: a certificate that parses, or a host name the Public Suffix
    /// List allows, cannot be written as a JSON schema, and such requests are rightly refused with 400.
    /// The body is read as JSON only when its media type is `application/json` (RFC 9110 §8.3.1: type and subtype
    /// in any case, parameters after `;`, a charset only if UTF-8); every other one is a 415 that stores nothing.
    @Test func onlyTheJSONMediaTypeIsReadAsJSON() throws {
        let deployment = try Self.deploy(.sqlite)
        defer { deployment.stop() }
        #expect(try deployment.cli.run(["admin", "add", "ops", "--role", "operator"]).status == 0)
        let ops = try deployment.cli.run(["admin", "token", "ops", "--label", "api-test"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        func addCustomer(_ name: String, contentTypes: [String]) throws -> CurlResponse {
            let file = deployment.cli.directory.file("customer-\(name).json")
            try Data(#"{"name": "\#(name)"}"#.utf8).write(to: URL(fileURLWithPath: file))
            // curl sends `Content-Type:` with nothing after it as no field at all; `-H 'Content-Type;'` sends it empty.
            let headers = contentTypes.flatMap { ["-H", $0.isEmpty ? "Content-Type;" : "Content-Type: \($0)"] }
            return try CurlResponse.get("http://127.0.0.1:\(deployment.apiPort)/api/v1/customers", [
                "-X", "POST", "-H", "Authorization: Bearer \(ops)", "-H", "Expect:", "--data-binary", "@\(file)",
            ] + (contentTypes.isEmpty ? ["-H", "Content-Type:"] : headers), in: deployment.cli.directory)
        }

        let before = try deployment.databaseState()
        let refused: [[String]] = [
            ["application/jsonx"], ["application/json-seq"], ["application/jsonl"], ["text/json"], ["application/x-www-form-urlencoded"],
            ["application/json; charset=latin1"], ["application/json; charset=utf-16"], ["application/json; charset=utf-8; charset=latin1"],
            ["application/json charset=utf-8"], ["application/json; charset"], ["application/json; charset=\"utf-8"], ["application /json"],
            ["application/"], ["/json"], [""], [], ["application/json", "application/json"], ["application/json", "text/plain"],
        ]
        for contentTypes in refused {
            let response = try addCustomer("initech", contentTypes: contentTypes)
            let message = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
                .flatMap { $0["error"] as? [String: Any] }?["message"] as? String ?? ""
            #expect(response.status == 415 && message.contains("application/json"), "\(contentTypes): \(response.status) \(message)")
        }
        #expect(try deployment.databaseState() == before)

        let accepted = [
            "application/json", "Application/JSON", "application/json; charset=utf-8", "application/json;charset=UTF-8",
            "application/json; charset=\"utf-8\"", "application/json ; version=1", "application/json;;",
        ]
        for (index, contentType) in accepted.enumerated() {
            let response = try addCustomer("customer\(index)", contentTypes: [contentType])
            #expect(response.status == 201, "\(contentType): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    /// schemathesis drives every operation from the OpenAPI document, with every check, the positive-data check
    /// included: whatever the document allows must be accepted or refused only by a documented rule (401, 403,
    /// 404, 409, 429), never with a 400. The document names PEM inputs by format (`pem-certificate`,
    /// `pem-public-key`); the hooks file generates those from real certificates and keys made here.
    @Test func theServerAnswersAsItsOpenAPIDocumentSays() throws {
        // schemathesis sends wrong tokens on purpose, many a minute.
        let deployment = try Self.deploy(.sqlite, failedAuthenticationsPerMinute: 1000, refusalsPerAdminPerMinute: 1000)
        defer { deployment.stop() }
        let operatorToken = try deployment.cli.run(["admin", "add", "ops", "--role", "operator"]).status == 0
            ? deployment.cli.run(["admin", "token", "ops", "--label", "schemathesis"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) : ""
        #expect(operatorToken.hasPrefix("pinset_"))
        let directory = deployment.cli.directory
        var certificates: [String] = [], publicKeys: [String] = []
        for index in 0..<3 {
            let key = directory.file("st-key-\(index).pem"), certificate = directory.file("st-cert-\(index).pem")
            let made = try ProcessRunner.run("openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", certificate,
                "-days", "30", "-subj", "/CN=schemathesis-\(index).example",
            ])
            let publicKey = try ProcessRunner.run("openssl", ["pkey", "-in", key, "-pubout"])
            #expect(made.status == 0 && publicKey.status == 0, "\(made.combined)\(publicKey.combined)")
            certificates.append(try String(contentsOfFile: certificate, encoding: .utf8))
            publicKeys.append(publicKey.stdoutText)
        }
        _ = try directory.write("pem-material.json", Array(try JSONSerialization.data(withJSONObject: ["certificates": certificates, "publicKeys": publicKeys])))
        let hooks = try directory.write("pinset_hooks.py", """
            import json, os
            import schemathesis
            from hypothesis import strategies as st

            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pem-material.json")) as material_file:
                material = json.load(material_file)
            schemathesis.openapi.format("pem-certificate", st.sampled_from(material["certificates"]))
            schemathesis.openapi.format("pem-public-key", st.sampled_from(material["publicKeys"]))
            """)
        let result = try ProcessRunner.run("st", [
            "run", "http://127.0.0.1:\(deployment.apiPort)/api/v1/openapi.json", "-H", "Authorization: Bearer \(operatorToken)",
            "--checks", "all", "--max-examples", "10", "--generation-deterministic", "--request-timeout", "10",
        ], environment: ["HOME": directory.path, "SCHEMATHESIS_HOOKS": hooks], timeout: 400, directory: directory.path)
        // Generated PEM makes some lines very long: each is cut so that every failure's summary fits.
        let summary = result.stdoutText.split(separator: "\n").map { $0.prefix(400) }.joined(separator: "\n").suffix(12_000)
        #expect(result.status == 0, "\(summary)\n\(result.stderr.suffix(2000))")
        #expect(result.stdoutText.contains("Tested: 29"), "every operation of the document was exercised: \(summary.suffix(3000))")
    }
}
