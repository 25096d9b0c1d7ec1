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

    /// acme's api.example.test serves a renewed key; the server monitors it every second and serves the admin API
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
            "monitoring": ["intervalSeconds": 1, "timeoutSeconds": 0.8, "concurrency": 1, "caFile": served.ca, "expiryWarningDays": 7,
                           "connectTo": ["api.example.test": "127.0.0.1"]],
            "resignIntervalSeconds": 5,
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
        try browser.click("#login")
        let afterWrongToken = try browser.pageSource
        #expect(afterWrongToken.contains("not accepted"), "\(afterWrongToken)")

        // alice, the author, sees her request but cannot approve it.
        try browser.type(try deployment.token("alice"), into: "#token")
        try browser.click("#login")
        try browser.open("\(deployment.dashboard)/requests/1")
        #expect(try browser.text("#state") == "open")
        #expect(try !browser.exists("#approve"))
        #expect(try browser.pageSource.contains("another admin with the reviewer role must approve it"))
        try browser.click("header form button")
        #expect(try browser.currentURL.hasSuffix("/dashboard/login"))

        // bob logs in: a session cookie the page's scripts cannot read, sent only over TLS and only same-site.
        try browser.type(try deployment.token("bob"), into: "#token")
        try browser.click("#login")
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
        try browser.click("tr[data-customer=acme] a")
        let renewedPin = try CLIPinSourceTests.opensslPin(certificate: deployment.cli.directory.file("renewed.pem"))
        let host = try browser.text("#hosts tr[data-host='api.example.test']")
        #expect(host.contains("matches-nothing") && host.contains(renewedPin), "\(host)")
        try browser.screenshot("3-customer")

        // The request: its diff, and the live chain checked against the pins it would publish.
        try browser.open("\(deployment.dashboard)/requests/1")
        let preview = try browser.text("#preview tr[data-host='api.example.test']")
        #expect(preview.contains("+ \(renewedPin)") && preview.contains("matches"), "\(preview)")
        try browser.screenshot("4-request")
        try browser.click("#approve")
        #expect(try browser.text("#notice").contains("Approved"))
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
        try browser.click("#go")
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
        try browser.click("#break-glass button")
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
        func curl(_ path: String, _ extra: [String] = []) throws -> CurlResponse {
            try CurlResponse.get("https://api.example.test:\(deployment.apiPort)/dashboard\(path)", [
                "--resolve", "api.example.test:\(deployment.apiPort):127.0.0.1", "--cacert", ca, "-b", jar, "-c", jar,
            ] + extra, in: deployment.cli.directory)
        }
        func field(_ name: String, in response: CurlResponse) -> String? {
            let page = String(decoding: response.body, as: UTF8.self)
            guard let range = page.range(of: "name=\"\(name)\" value=\"") else { return nil }
            return String(page[range.upperBound...].prefix { $0 != "\"" })
        }
        func logIn(_ admin: String) throws -> CurlResponse {
            let form = try curl("/login")
            return try curl("/login", ["--data-urlencode", "form=\(field("form", in: form) ?? "")", "--data-urlencode", "token=\(try deployment.token(admin))"])
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

        // Failed logins count per address like failed API tokens: three a minute, then 429 even for a valid token.
        for _ in 0..<3 {
            let form = try curl("/login")
            #expect(try curl("/login", ["--data-urlencode", "form=\(field("form", in: form) ?? "")", "--data-urlencode", "token=pinset_\(String(repeating: "Z", count: 43))"]).status == 401)
        }
        #expect(try logIn("alice").status == 429)
    }
}
