import Foundation
import PinsetTestSupport
import Testing

/// The dashboard of a real `pinset serve` over TLS: in a real headless chromium (through WebDriver), and with curl
/// for what a browser would never send. acme's live host has moved to a key its pins do not hold (a renewal that
/// replaced the key), so the monitor reports it failing; alice proposes the new key, bob approves it in the
/// browser, and the server serves the new version. Every refused state change leaves the database as it was.
@Suite(.serialized) struct DashboardTests {
    struct Deployment {
        let team: CLIReviewTests.Team
        let server: RunningServer
        let liveHost: BackgroundProcess
        let apiPort: Int
        var cli: PinsetCLI { team.served.cli }
        var dashboard: String { "https://127.0.0.1:\(apiPort)/dashboard" }

        func stop() {
            server.stop()
            liveHost.stop()
            team.served.stop()
        }

        func token(_ admin: String) throws -> String {
            try String(contentsOfFile: team.tokens[admin]!, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The state of one change request, read through the CLI by its author.
        func requestState(_ id: Int) throws -> String? {
            let shown = try team.run("alice", ["review", "list", "--all", "--json"])
            guard shown.status == 0 else { throw Failure("review list: \(shown.combined)") }
            let requests = try JSONSerialization.jsonObject(with: Data(shown.stdout)) as? [[String: Any]]
            return requests?.first { $0["id"] as? Int == id }?["state"] as? String
        }
    }

    /// A reason written to become markup if escaped by grapheme cluster: U+0600 joins the `<` that follows into one
    /// Character, U+0301 the `>` and `"` before it. Unescaped, the meta tag would send every viewer elsewhere and the
    /// unclosed form would take over the page's approve button for request 1.
    static let markupReason = "backup key \u{600}<meta http-equiv=\"refresh\u{301}\" content=0;url=/dashboard/login>\u{301} \u{600}<form method=post action=/dashboard/requests/1/approve>\u{301}"

    /// acme's api.example.test serves a renewed key; the server monitors it every three seconds and serves the admin API
    /// and dashboard over TLS; alice has proposed the renewed key (request 1) and a spare (request 2).
    static func deploy() throws -> Deployment {
        let team = try CLIReviewTests.team()
        let served = team.served
        let cli = served.cli
        // The renewal: the same name, a new key, from the same CA. Apps holding the old pins would refuse it.
        served.server.stop()
        let renewed = try CLIConnectToTests.renewedCertificate(in: cli.directory)
        let liveHost = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(served.port)", "-cert", renewed.cert, "-key", renewed.key, "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server-renewed")
        #expect(FreePort.waitUntilListening(port: served.port))
        chmod(served.leaf.key, 0o600)
        let apiPort = try FreePort.pick()
        let server = try RunningServer(cli: cli, extraConfiguration: [
            "api": ["host": "127.0.0.1", "port": apiPort, "certificate": served.leaf.cert, "privateKey": served.leaf.key, "failedAuthenticationsPerMinute": 3],
            "monitoring": ["intervalSeconds": 3, "timeoutSeconds": 2.5, "concurrency": 1, "caFile": served.ca, "expiryWarningDays": 7,
                           "connectTo": ["api.example.test": "127.0.0.1"]],
            "resignIntervalSeconds": 5,
            "reports": ["host": "127.0.0.1", "port": 0, "flushIntervalSeconds": 0.1],
        ])
        let deployment = Deployment(team: team, server: server, liveHost: liveHost, apiPort: apiPort)
        let failing = try MonitoringTests.waitForMonitoring(server, in: cli.directory) { MonitoringTests.counts($0)["matches-nothing"] == 1 }
        #expect(MonitoringTests.counts(failing)["matches-nothing"] == 1, "\(failing)")
        let proposed = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--from-host", "api.example.test:\(served.port)",
                                              "--request-reason", "renewed certificate, new key"] + served.reach)
        #expect(proposed.status == 0 && proposed.stderr.contains("Change request 1 opened"), "\(proposed.combined)")
        let spare = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash,
                                           "--request-reason", markupReason] + served.reach)
        #expect(spare.status == 0 && spare.stderr.contains("Change request 2 opened"), "\(spare.combined)")
        return deployment
    }

    @Test func aReviewerApprovesInTheBrowserAndTheServerServesTheNewVersion() async throws {
        let deployment = try Self.deploy()
        defer { deployment.stop() }
        let browser = try HeadlessChromium(in: deployment.cli.directory)
        defer { browser.quit() }
        let servedBefore = try #require(try deployment.server.verifiedVersion(of: "acme", trustedBy: deployment.cli))

        // Not logged in: the login page.
        try browser.open("\(deployment.dashboard)/")
        #expect(try browser.currentURL.hasSuffix("/dashboard/login"))
        try browser.screenshot("1-login")
        // A wrong token is refused on the page.
        try browser.type("pinset_\(String(repeating: "Q", count: 43))", into: "#token")
        try browser.clickToNavigate("#login")
        let afterWrongToken = try browser.pageSource
        #expect(afterWrongToken.contains("not accepted"), "\(afterWrongToken)")

        // alice, the author, sees her request but cannot approve it.
        try browser.type(try deployment.token("alice"), into: "#token")
        try browser.clickToNavigate("#login")
        try browser.open("\(deployment.dashboard)/requests/1")
        #expect(try browser.text("#state") == "open")
        #expect(try !browser.exists("#approve"))
        #expect(try browser.pageSource.contains("another admin with the reviewer role must approve it"))
        try browser.clickToNavigate("header form button")
        #expect(try browser.currentURL.hasSuffix("/dashboard/login"))

        // bob logs in: a session cookie the page's scripts cannot read, sent only over TLS and only same-site.
        try browser.type(try deployment.token("bob"), into: "#token")
        try browser.clickToNavigate("#login")
        #expect(try browser.text("#who").hasPrefix("bob"))
        let session = try #require(try browser.cookies().first { $0["name"] as? String == "__Host-pinset_session" })
        #expect(session["httpOnly"] as? Bool == true && session["secure"] as? Bool == true && session["sameSite"] as? String == "Strict", "\(session)")

        // The overview: acme needs attention (a failing host, open requests). Request 2's reason shows as text.
        #expect(try !browser.exists("meta[http-equiv]") && !browser.exists("main form"), "no markup from the database")
        #expect(try browser.text("tr[data-request='2']").contains("<meta http-equiv"))
        let acme = try browser.text("tr[data-customer=acme]")
        #expect(acme.contains("1 failing") && acme.contains("2 open"), "\(acme)")
        #expect(try !browser.exists("tr[data-customer=globex]"), "bob has no role for globex")
        try browser.screenshot("2-overview")

        // The customer: the host is in state matches-nothing, with the key it serves now.
        try browser.clickToNavigate("tr[data-customer=acme] a")
        let renewedPin = try CLIPinSourceTests.opensslPin(certificate: deployment.cli.directory.file("renewed.pem"))
        let host = try browser.text("#hosts tr[data-host='api.example.test']")
        #expect(host.contains("matches-nothing") && host.contains(renewedPin), "\(host)")
        try browser.screenshot("3-customer")

        // The request: its diff, and the live chain checked against the pins it would publish.
        try browser.open("\(deployment.dashboard)/requests/1")
        let preview = try browser.text("#preview tr[data-host='api.example.test']")
        #expect(preview.contains("+ \(renewedPin)") && preview.contains("matches"), "\(preview)")
        try browser.screenshot("4-request")
        try browser.clickToNavigate("#approve")
        let answer = try browser.exists("#notice") ? try browser.text("#notice")
            : "no notice; refused with: \(try browser.exists("#refusal") ? try browser.text("#refusal") : "nothing shown")"
        #expect(answer.contains("Approved"), "\(answer)")
        #expect(try browser.text("#state") == "applied")
        try browser.screenshot("5-approved")
        #expect(try deployment.requestState(1) == "applied")

        // The running server signs and serves the new version; the monitor then sees the host match.
        var served = servedBefore
        for _ in 0..<150 where served <= servedBefore {
            served = try deployment.server.verifiedVersion(of: "acme", trustedBy: deployment.cli) ?? served
            if served <= servedBefore { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(served > servedBefore)
        let healthy = try MonitoringTests.waitForMonitoring(deployment.server, in: deployment.cli.directory) { MonitoringTests.counts($0)["matches"] == 1 }
        #expect(MonitoringTests.counts(healthy)["matches"] == 1, "\(healthy)")
        try browser.open("\(deployment.dashboard)/")
        #expect(try browser.text("tr[data-customer=acme]").contains("all match"))
        try browser.screenshot("6-overview-after")

        // A page of another site posts the approval of request 2 in bob's browser: refused, nothing changes.
        let before = try deployment.cli.databaseDump()
        let attack = try deployment.cli.directory.write("cross-site.html", """
            <!doctype html><html><body><form method="post" action="\(deployment.dashboard)/requests/2/approve">
            <input type="hidden" name="csrf" value="guessed"><button id="go" type="submit">Win a prize</button></form></body></html>
            """)
        try browser.open("file://\(attack)")
        try browser.clickToNavigate("#go")
        #expect(try browser.text("#refusal").contains("came from another site (cross-site)"))
        try browser.screenshot("7-cross-site-refused")
        #expect(try deployment.requestState(2) == "open")
        #expect(try deployment.cli.databaseDump() == before)

        // An operator applies her own request without review: the dashboard shows it until bob acknowledges it there.
        let cli = deployment.cli
        let reach = deployment.team.served.reach
        #expect(try cli.run(["admin", "add", "olga", "--role", "operator"]).status == 0)
        let olgaToken = cli.directory.file("olga.token")
        #expect(try cli.run(["admin", "token", "olga", "--label", "test", "--out", olgaToken]).status == 0)
        let urgent = try cli.run(["pin", "add", "acme", "api.example.test", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                                  "--request-reason", "emergency backup key", "--token-file", olgaToken] + reach)
        #expect(urgent.status == 0 && urgent.stderr.contains("Change request 3 opened"), "\(urgent.combined)")
        let broken = try cli.run(["review", "break-glass", "3", "--reason", "outage, no reviewer reachable", "--token-file", olgaToken] + reach)
        #expect(broken.status == 0, "\(broken.combined)")
        try browser.open("\(deployment.dashboard)/")
        #expect(try browser.text("#break-glass").contains("outage, no reviewer reachable"))
        try browser.screenshot("8-break-glass")
        try browser.type("checked the spare key with the team", into: "#break-glass input[name=note]")
        try browser.clickToNavigate("#break-glass button")
        #expect(try !browser.exists("#break-glass"))
        let listed = try deployment.team.run("bob", ["review", "list", "--break-glass", "--all", "--json"])
        let event = (try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [[String: Any]])?.first
        #expect(event?["acknowledgedBy"] as? String == "bob" && event?["acknowledgement"] as? String == "checked the spare key with the team", "\(listed.combined)")
    }

    @Test func everyStateChangeNeedsTheSessionsCSRFTokenFromTheDashboardItself() throws {
        let deployment = try Self.deploy()
        defer { deployment.stop() }
        let jar = deployment.cli.directory.file("cookies.txt")
        let ca = deployment.team.served.ca
        /// From `address`: curl binds it as the source, so the server sees each test address as a client of its own.
        func curl(_ path: String, _ extra: [String] = [], from address: String = "127.0.0.1") throws -> CurlResponse {
            try CurlResponse.get("https://api.example.test:\(deployment.apiPort)/dashboard\(path)", [
                "--resolve", "api.example.test:\(deployment.apiPort):127.0.0.1", "--cacert", ca, "-b", jar, "-c", jar, "--interface", address,
            ] + extra, in: deployment.cli.directory)
        }
        func field(_ name: String, in response: CurlResponse) -> String? {
            let page = String(decoding: response.body, as: UTF8.self)
            guard let range = page.range(of: "name=\"\(name)\" value=\"") else { return nil }
            return String(page[range.upperBound...].prefix { $0 != "\"" })
        }
        func logIn(_ admin: String, from address: String = "127.0.0.1") throws -> CurlResponse {
            try logIn(token: try deployment.token(admin), from: address)
        }
        func logIn(token: String, from address: String) throws -> CurlResponse {
            let form = try curl("/login", from: address)
            return try curl("/login", ["--data-urlencode", "form=\(field("form", in: form) ?? "")", "--data-urlencode", "token=\(token)"], from: address)
        }
        func api(_ token: String, from address: String) throws -> CurlResponse {
            try CurlResponse.get("https://api.example.test:\(deployment.apiPort)/api/v1/me", [
                "--resolve", "api.example.test:\(deployment.apiPort):127.0.0.1", "--cacert", ca, "--interface", address, "-H", "Authorization: Bearer \(token)",
            ], in: deployment.cli.directory)
        }

        // Every answer forbids scripts, framing and foreign form targets.
        let login = try curl("/login")
        #expect(login.headers["content-security-policy"]?.contains("default-src 'none'") == true && login.headers["x-frame-options"] == "DENY", "\(login.headers)")
        #expect(login.headers["set-cookie"]?.contains("HttpOnly; Secure; SameSite=Strict") == true, "\(login.headers)")
        #expect(try curl("/").status == 303, "no session: to the login page")
        #expect(try curl("/requests/1/approve", ["--data", "csrf=x"]).status == 403, "no session: refused")
        // A login form that did not come from the login page (no matching form cookie) is refused.
        #expect(try curl("/login", ["--data-urlencode", "form=forged", "--data-urlencode", "token=\(try deployment.token("bob"))"]).status == 403)

        let loggedIn = try logIn("bob")
        #expect(loggedIn.status == 303 && loggedIn.headers["location"] == "/dashboard/", "\(loggedIn.headers)")
        let sessionCookie = try #require(loggedIn.headers["set-cookie"])
        #expect(sessionCookie.hasPrefix("__Host-pinset_session=") && sessionCookie.contains("HttpOnly; Secure; SameSite=Strict"), "\(sessionCookie)")
        let page = try curl("/requests/2")
        #expect(page.status == 200)
        let csrf = try #require(field("csrf", in: page))

        // Refused, each leaving the database as it was: no token, a wrong one, a foreign Origin, a cross-site fetch.
        let before = try deployment.cli.databaseDump()
        for (extra, why) in [
            (["--data", "note=x"], "CSRF token, so it may not come from this dashboard"),
            (["--data", "csrf=\(String(repeating: "A", count: csrf.count))"], "CSRF token, so it may not come from this dashboard"),
            (["--data", "csrf=\(csrf)", "-H", "Origin: https://attacker.example"], "came from https://attacker.example"),
            (["--data", "csrf=\(csrf)", "-H", "Sec-Fetch-Site: cross-site"], "came from another site"),
        ] {
            let refused = try curl("/requests/2/approve", extra)
            let page = String(decoding: refused.body, as: UTF8.self)
            #expect(refused.status == 403 && page.contains(why) && page.contains("Nothing was changed"), "\(why): \(refused.status) \(page)")
        }
        // Logging out needs the token too, and a page of another site cannot be opened inside a session.
        // A note that is not UTF-8 text is refused with a page that says so, not stored as an empty note.
        let notText = try deployment.cli.directory.write("not-utf8.form", Array("csrf=\(csrf)&note=".utf8) + [0xC0, 0xAF, 0x20])
        for body in [["--data", "csrf=\(csrf)&note=%FF%FEkey+checked"], ["--data-binary", "@\(notText)"]] {
            for action in ["/requests/2/reject", "/break-glass/1/acknowledge"] {
                let refused = try curl(action, body + ["-H", "Content-Type: application/x-www-form-urlencoded"])
                let page = String(decoding: refused.body, as: UTF8.self)
                #expect(refused.status == 400 && page.contains("is not UTF-8 text") && page.contains("Nothing was changed") && page.contains("<h1>"), "\(action): \(refused.status) \(page)")
            }
        }
        #expect(try curl("/logout", ["--data", "csrf=wrong"]).status == 403)
        #expect(try curl("/requests/2", ["-H", "Sec-Fetch-Site: cross-site"]).status == 403)
        #expect(try curl("/requests/2").status == 200, "still logged in")
        #expect(try deployment.cli.databaseDump() == before)
        #expect(try deployment.requestState(2) == "open")

        // With the token, from the dashboard's own origin: the rejection is made and audited under bob's name.
        let rejected = try curl("/requests/2/reject", ["--data", "csrf=\(csrf)", "--data-urlencode", "note=not needed", "-H",
                                                       "Origin: https://api.example.test:\(deployment.apiPort)"])
        #expect(rejected.status == 303, "\(String(decoding: rejected.body, as: UTF8.self))")
        #expect(try deployment.requestState(2) == "rejected")
        let audit = try deployment.cli.run(["log", "--customer", "acme", "--limit", "1", "--json"])
        let entry = (try JSONSerialization.jsonObject(with: Data(audit.stdout)) as? [[String: Any]])?.first
        #expect(entry?["actor"] as? String == "bob" && (entry?["details"] as? String)?.contains("not needed") == true, "\(audit.stdoutText)")

        // carol, a reviewer of globex only, finds neither acme nor its requests, even by their addresses.
        try FileManager.default.removeItem(atPath: jar)
        #expect(try logIn("carol").status == 303)
        #expect(try curl("/customers/acme").status == 404)
        #expect(try curl("/requests/1").status == 404)
        try FileManager.default.removeItem(atPath: jar)
        #expect(try logIn("bob").status == 303)

        // Logging out ends the session on the server: the old cookie no longer works.
        let saved = try String(contentsOfFile: jar, encoding: .utf8)
        let current = try #require(field("csrf", in: try curl("/")))
        #expect(current != csrf, "each session has its own CSRF token")
        #expect(try curl("/logout", ["--data", "csrf=\(current)"]).status == 303)
        try saved.write(toFile: jar, atomically: true, encoding: .utf8)
        #expect(try curl("/").status == 303, "the logged-out session is gone even when its cookie is sent again")

        // Revoking the token ends a session made with it at once.
        #expect(try logIn("bob").status == 303)
        #expect(try curl("/").status == 200)
        let revoked = try deployment.cli.run(["admin", "revoke", "bob", "--label", "test"])
        #expect(revoked.status == 0, "\(revoked.combined)")
        #expect(try curl("/").status == 303)

        // One rule for logins and API calls (three failures a minute here, from 127.0.0.7 shared with a guesser):
        // failures count per address whichever door they came through; past the limit a wrong token gets 429 at
        // both, and a valid one is still accepted at both, so guesses from a shared address lock no admin out.
        let shared = "127.0.0.7", elsewhere = "127.0.0.8"
        let wrong = "pinset_\(String(repeating: "Z", count: 43))"
        let alice = try deployment.token("alice")
        try FileManager.default.removeItem(atPath: jar)
        for _ in 0..<2 { #expect(try logIn(token: wrong, from: shared).status == 401) }
        #expect(try api(wrong, from: shared).status == 401)
        let throttledLogin = try logIn(token: wrong, from: shared)
        let throttledCall = try api(wrong, from: shared)
        #expect(throttledLogin.status == 429 && throttledCall.status == 429, "\(throttledLogin.status) \(throttledCall.status)")
        #expect(throttledLogin.headers["retry-after"] != nil && throttledCall.headers["retry-after"] != nil, "\(throttledLogin.headers)")
        #expect(String(decoding: throttledLogin.body, as: UTF8.self).contains("Too many failed authentications from this address"))
        #expect(try api(wrong, from: elsewhere).status == 401, "another address is not throttled")
        #expect(try api(alice, from: shared).status == 200, "the API takes a valid token from the throttled address")
        let validLogin = try logIn(token: alice, from: shared)
        #expect(validLogin.status == 303 && validLogin.headers["location"] == "/dashboard/", "the dashboard takes it too: \(validLogin.status)")
        #expect(try curl("/", from: shared).status == 200)
        #expect(try logIn(token: wrong, from: shared).status == 429, "a wrong token from that address is still refused")
        #expect(try api(wrong, from: shared).status == 429)

        // A session probing for customers it may not see is counted with its token's API calls (20 refusals a
        // minute): then 429 at both doors, logged, while a page the dashboard lacks is not counted.
        for _ in 0..<3 { #expect(try curl("/no-such-page", from: shared).status == 404) }
        var probed: [Int] = []
        for index in 0..<21 { probed.append(try curl("/customers/hidden-\(index)", from: shared).status) }
        #expect(probed.prefix(20).allSatisfy { $0 == 404 } && probed.last == 429, "\(probed)")
        #expect(try api(alice, from: shared).status == 429, "the same token through the API")
        let log = deployment.server.process.stdout + deployment.server.process.stderr
        #expect(log.contains("refused too often") && log.contains("alice"), "\(log.suffix(1500))")
    }

    /// axe-core's own file, as the `axe-playwright-python` package ships it (scripts/install-dependencies).
    static func axeSource() throws -> String {
        let found = try ProcessRunner.run("python3", ["-c", "import importlib.util; print(importlib.util.find_spec('axe_playwright_python').submodule_search_locations[0])"])
        let directory = found.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard found.status == 0, !directory.isEmpty else { throw Failure("axe-core is not installed (scripts/install-dependencies): \(found.combined)") }
        return try String(contentsOfFile: "\(directory)/axe.min.js", encoding: .utf8)
    }

    /// axe-core's WCAG 2 A and AA rules and its best practices, run on the page the browser shows: each violation
    /// as "rule: the elements it found".
    static func accessibilityViolations(in browser: HeadlessChromium, axe: String) throws -> [String] {
        _ = try browser.execute(axe + "\n;return typeof window.axe;")
        let found = try browser.executeAsync("""
            const done = arguments[arguments.length - 1];
            window.axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}})
              .then(result => done(result.violations.map(v => v.id + ": " + v.nodes.map(n => n.target.join(" ")).join(", "))))
              .catch(error => done(["axe failed: " + error]));
            """)
        guard let violations = found as? [String] else { throw Failure("axe-core returned \(String(describing: found))") }
        return violations
    }

    /// The dashboard as people use it: the figures add up and say what they count, a report row shows the key the
    /// host served, codes read as words, every page has its landmarks and labels, a phone-wide window never scrolls
    /// sideways, axe-core finds nothing, and the icon every browser asks for is there.
    @Test func thePagesSayWhatTheyCountAndFitANarrowScreen() async throws {
        let deployment = try Self.deploy()
        defer { deployment.stop() }
        let cli = deployment.cli
        let server = deployment.server
        let axe = try Self.axeSource()

        // Fetches that send no version header (legacy clients, first launches, curl).
        for _ in 0..<4 {
            #expect(try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory).status == 200)
        }
        // Reports: two installations saw the renewed key, one the key pinned now (an app with an older pin set), all
        // for the same host with the same result; two for a host acme does not publish.
        let reportsPort = try ReportsListenerTests.waitForReportsPort(of: server)
        let renewedPEM = try String(contentsOfFile: cli.directory.file("renewed.pem"), encoding: .utf8)
        let pinnedPEM = try String(contentsOfFile: deployment.team.served.leaf.cert, encoding: .utf8)
        let reports: [(pem: String, host: String)] = [(renewedPEM, "api.example.test"), (renewedPEM, "api.example.test"), (pinnedPEM, "api.example.test"),
                                                     (renewedPEM, "elsewhere.example.org"), (renewedPEM, "elsewhere.example.org")]
        for (index, report) in reports.enumerated() {
            let body = TrustKitReportFixture.json(leafPEM: report.pem, hostname: report.host, vendorID: "install-\(index)")
            #expect(try ReportsListenerTests.post(body, port: reportsPort) == 202)
        }
        var status: [String: Any] = [:]
        for attempt in 0..<100 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(100)) }
            status = try JSONSerialization.jsonObject(with: Data(try CurlResponse.get("\(server.baseURL)/status", in: cli.directory).body)) as? [String: Any] ?? [:]
            if ((status["reports"] as? [String: Any])?["failuresLastHour"] as? [String: Int])?["acme"] == reports.count { break }
        }
        let uptake = try #require(((status["uptake"] as? [String: Any])?["customers"] as? [String: Any])?["acme"] as? [String: Any], "\(status)")
        let fetches = try #require(uptake["fetches"] as? Int)
        #expect(fetches >= 4 && uptake["fetchesReportingVersion"] as? Int == 0, "\(uptake)")
        #expect(((status["reports"] as? [String: Any])?["failuresLastHour"] as? [String: Int])?["acme"] == reports.count, "\(status)")

        // The icon: served from the dashboard's own origin, cacheable, under the same CSP.
        let icon = try CurlResponse.get("https://api.example.test:\(deployment.apiPort)/favicon.ico", [
            "--resolve", "api.example.test:\(deployment.apiPort):127.0.0.1", "--cacert", deployment.team.served.ca,
        ], in: cli.directory)
        #expect(icon.status == 200 && icon.headers["content-type"] == "image/x-icon" && icon.body.starts(with: [0, 0, 1, 0]), "\(icon.status) \(icon.headers)")
        #expect(icon.headers["cache-control"] == "public, max-age=86400" && icon.headers["content-security-policy"]?.contains("default-src 'none'") == true, "\(icon.headers)")

        let browser = try HeadlessChromium(in: cli.directory)
        defer { browser.quit() }
        try browser.resize(width: 600, height: 900)
        /// The page never scrolls sideways at this width; a table wider than the screen scrolls inside its container.
        func fitsTheWindow(_ name: String) throws {
            let widths = try browser.execute("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];") as? [Int] ?? []
            #expect(widths.count == 2 && widths[1] <= 600 && widths[1] > 500 && widths[0] <= widths[1], "\(name): scrollWidth, clientWidth \(widths)")
            try browser.screenshot("600px-\(name)")
            let violations = try Self.accessibilityViolations(in: browser, axe: axe)
            #expect(violations.isEmpty, "axe-core on \(name): \(violations)")
        }

        // The login page: a main landmark around the form, a labelled token field.
        try browser.open("\(deployment.dashboard)/login")
        #expect(try browser.exists("meta[name=viewport][content='width=device-width, initial-scale=1']"))
        #expect(try browser.exists("main h1") && browser.exists("main label[for=token]"))
        try fitsTheWindow("login")
        try browser.type(try deployment.token("bob"), into: "#token")
        try browser.clickToNavigate("#login")
        #expect(try browser.text("#who").hasPrefix("bob"))

        // The overview: the fetches that reported no version are counted, not "no fetches".
        let row = try browser.text("tr[data-customer=acme]")
        #expect(row.contains("\(fetches) fetches, none reported a version") && !row.contains("no fetches"), "\(row)")
        try fitsTheWindow("overview")

        // The customer: the summary's pin failures add up to the table, which lists the unpublished-host bucket and
        // tells the two api.example.test rows apart by the key each saw served; next keys in words.
        try browser.open("\(deployment.dashboard)/customers/acme")
        #expect(try browser.text("#uptake").contains("\(fetches) fetches, none reported a version"))
        #expect(try browser.text("#failures-last-hour") == String(reports.count))
        #expect(try browser.text("#reports-total") == String(reports.count))
        let renewedPin = try CLIPinSourceTests.opensslPin(certificate: cli.directory.file("renewed.pem"))
        let rows = try browser.execute("return Array.from(document.querySelectorAll('#reports tbody tr')).map(r => r.innerText);") as? [String] ?? []
        #expect(rows.count == 3, "\(rows)")
        #expect(rows.contains { $0.contains("api.example.test") && $0.contains(renewedPin) && $0.contains("no: not a current pin") && $0.contains("\t2\t") }, "\(rows)")
        #expect(rows.contains { $0.contains("api.example.test") && $0.contains(deployment.team.served.leafPin) && $0.contains("yes") && $0.contains("\t1\t") }, "\(rows)")
        #expect(rows.contains { $0.contains("unpublished-host") && $0.contains("does not publish") && $0.contains("\t2\t") }, "\(rows)")
        #expect(try browser.text("#reports thead").contains("Served key"))
        let host = try browser.text("#hosts tr[data-host='api.example.test']")
        #expect(host.contains("no next key pinned") && !host.contains("no-next-key"), "\(host)")
        try fitsTheWindow("customer")

        // The request: its note fields have labels, not only a placeholder.
        try browser.open("\(deployment.dashboard)/requests/2")
        #expect(try browser.text("label[for=reject-note]").contains("Why"))
        #expect(try !browser.exists("input[placeholder]"))
        try fitsTheWindow("request")

        // A page that is not there: a heading that says so.
        try browser.open("\(deployment.dashboard)/nothing-here")
        #expect(try browser.text("main h1") == "Not found")
        try fitsTheWindow("not-found")
    }
}
