#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// The README's first start: `scripts/serve` from a fresh checkout shows the whole product on loopback — the demo
/// bundle, and the admin API and dashboard with a development operator whose token it prints and keeps in a 0600
/// file — and a later start reuses what the first made.
///
/// The script runs as written, from a temporary copy of the checkout's `scripts/serve`, with two stand-ins on the
/// way so the test neither installs packages nor builds: `scripts/install-dependencies` records what it was asked
/// for, and `swift` (first on PATH) runs the binary already built, as `swift run … pinset` would after building it.
@Suite(.serialized) struct ServeScriptFirstStartTests {
    struct Checkout {
        let root: TemporaryDirectory
        let logs: TemporaryDirectory
        var installRequests: String { (try? String(contentsOfFile: root.file("install-dependencies.requests"), encoding: .utf8)) ?? "" }
        var tokenFile: String { root.file(".pinset-data/development-admin-token") }

        init() throws {
            root = try TemporaryDirectory(prefix: "pinset-checkout")
            logs = try TemporaryDirectory(prefix: "pinset-checkout-logs")
            try FileManager.default.createDirectory(atPath: root.file("scripts"), withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: root.file("bin"), withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: SourceTree.path("scripts/serve"), toPath: root.file("scripts/serve"))
            _ = try root.write("scripts/install-dependencies", """
                #!/bin/sh
                echo "$*" >> "$(dirname "$0")/../install-dependencies.requests"

                """, mode: 0o755)
            _ = try root.write("bin/swift", """
                #!/bin/sh
                [ "$1 $2 $3 $4" = "run -debug-info-format none pinset" ] || { echo "unexpected: swift $*" >&2; exit 97; }
                shift 4
                exec '\(PinsetCLI.binary)' "$@"

                """, mode: 0o755)
        }

        /// `scripts/serve --port 0` (a free port: other tests run beside this one), with no data location in the
        /// environment. Each step execs the next, so the process's pid is the server's.
        func serve() throws -> BackgroundProcess {
            try BackgroundProcess("/bin/sh", [
                "-c", #"unset PINSET_DATA_DIR PINSET_PUBLIC_SUFFIX_LIST; PATH="$1/bin:$PATH" exec "$1/scripts/serve" --port 0"#, "sh", root.path,
            ], logDirectory: logs.path, name: "scripts-serve-\(UUID().uuidString.prefix(6))")
        }

        func remove() {
            root.remove()
            logs.remove()
        }
    }

    /// What the start printed once it has said everything: the line that ends the development operator's block.
    func startedOutput(of server: BackgroundProcess, endingWith marker: String) throws -> String {
        _ = server.waitFor(timeout: 180) { server.stdout.contains(marker) }
        guard server.stdout.contains(marker) else {
            throw Failure("scripts/serve did not print '\(marker)': \(server.stdout)\n\(server.stderr)")
        }
        return server.stdout
    }

    func value(after prefix: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count).prefix { $0 != " " }) }
    }

    /// Logs in to the dashboard at `dashboard` with `token` as a browser would: the login form first (its cookie and
    /// form id), then the token. Returns the answer to the login and, after it, the dashboard's front page.
    func logIn(to dashboard: String, token: String, in directory: TemporaryDirectory) throws -> (login: CurlResponse, page: CurlResponse) {
        let jar = directory.file("cookies-\(UUID().uuidString.prefix(6)).txt")
        let form = try CurlResponse.get("\(dashboard)login", ["-b", jar, "-c", jar], in: directory)
        let html = String(decoding: form.body, as: UTF8.self)
        guard form.status == 200, let field = html.range(of: "name=\"form\" value=\"") else {
            throw Failure("no login form at \(dashboard)login: \(form.status) \(html)")
        }
        let formID = String(html[field.upperBound...].prefix { $0 != "\"" })
        let login = try CurlResponse.get("\(dashboard)login", [
            "-b", jar, "-c", jar, "--data-urlencode", "form=\(formID)", "--data-urlencode", "token=\(token)",
        ], in: directory)
        let page = try CurlResponse.get(dashboard, ["-b", jar, "-c", jar], in: directory)
        return (login, page)
    }

    @Test func theFirstStartServesTheDemoAndTheDashboardWithThePrintedToken() throws {
        let checkout = try Checkout()
        defer { checkout.remove() }
        let server = try checkout.serve()
        defer { server.stop() }
        let output = try startedOutput(of: server, endingWith: "Token: ")
        #expect(checkout.installRequests == "--serve\n", "scripts/serve installs only what building and serving need")

        // The demo bundle, fetched with curl and verified against the development trust certificate.
        let port = try #require(RunningServer.listeningPort(in: output), "\(output)")
        let bundle = checkout.root.file("demo.json.signed")
        let fetched = try ProcessRunner.run("curl", ["-sS", "--max-time", "10", "-o", bundle, "-w", "%{http_code}", "http://127.0.0.1:\(port)/demo.json.signed"])
        #expect(fetched.stdoutText == "200", "\(fetched.combined)")
        let verified = try ProcessRunner.run(PinsetCLI.binary, ["verify", bundle, "--trust", checkout.root.file(".pinset-data/trust-cert.pem"), "--customer", "demo"])
        #expect(verified.status == 0 && verified.stdoutText.contains("OK: customer 'demo'"), "\(verified.combined)")

        // The printed token is the one in the 0600 file, and logs in to the printed dashboard on loopback.
        let token = try #require(value(after: "Token: ", in: output), "\(output)")
        let dashboard = try #require(value(after: "Dashboard: ", in: output), "\(output)")
        #expect(dashboard.hasPrefix("http://127.0.0.1:") && dashboard.hasSuffix("/dashboard/"), "\(dashboard)")
        #expect(output.contains("Created the development operator 'developer'") && output.contains(checkout.tokenFile), "\(output)")
        let mode = try FileManager.default.attributesOfItem(atPath: checkout.tokenFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try String(contentsOfFile: checkout.tokenFile, encoding: .utf8) == "\(token)\n")
        // Printed once for the operator, in no log line (the log shares standard output, and has standard error).
        #expect((server.stdout + server.stderr).split(separator: "\n").filter { $0.contains(token) } == ["Token: \(token)"], "\(output)")

        let (login, page) = try logIn(to: dashboard, token: token, in: checkout.logs)
        #expect(login.status == 303 && login.headers["location"] == "/dashboard/", "\(login.status) \(login.headers)")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(page.status == 200 && html.contains("developer") && html.contains("demo"), "\(page.status) \(html)")
        // The same token calls the admin API beside it.
        let api = try #require(value(after: "Admin API: ", in: output), "\(output)")
        let customers = try CurlResponse.get("\(api)customers", ["-H", "Authorization: Bearer \(token)"], in: checkout.logs)
        #expect(customers.status == 200 && String(decoding: customers.body, as: UTF8.self).contains("\"demo\""), "\(customers.status)")
        // Fail closed: a token that is not the printed one gets no session.
        let (refused, _) = try logIn(to: dashboard, token: "pinset_" + String(repeating: "A", count: 43), in: checkout.logs)
        #expect(refused.status != 303, "\(refused.status) \(refused.headers)")

        #expect(server.stop() == 0, "\(server.stderr)")
    }

    @Test func aLaterStartReusesTheDataAndIssuesATokenOnlyWhenItsFileIsGone() throws {
        let checkout = try Checkout()
        defer { checkout.remove() }
        let first = try checkout.serve()
        defer { first.stop() }
        let firstToken = try #require(value(after: "Token: ", in: try startedOutput(of: first, endingWith: "Token: ")))
        #expect(first.stop() == 0)

        // The file is still there: the same data, the same token, and no token printed.
        let second = try checkout.serve()
        defer { second.stop() }
        let kept = try startedOutput(of: second, endingWith: "No new token was issued")
        #expect(!kept.contains("Token: ") && !kept.contains(firstToken) && !kept.contains("DEMO customer"), "\(kept)")
        #expect(kept.contains(checkout.tokenFile), "\(kept)")
        let port = try #require(RunningServer.listeningPort(in: kept))
        #expect(try CurlResponse.get("http://127.0.0.1:\(port)/demo.json.signed", in: checkout.logs).status == 200)
        let dashboard = try #require(value(after: "Dashboard: ", in: kept), "\(kept)")
        #expect(try logIn(to: dashboard, token: firstToken, in: checkout.logs).login.status == 303)
        #expect(second.stop() == 0)

        // The file is gone: a new token, printed and written again; the one the file held no longer logs in.
        try FileManager.default.removeItem(atPath: checkout.tokenFile)
        let third = try checkout.serve()
        defer { third.stop() }
        let reissued = try startedOutput(of: third, endingWith: "Token: ")
        #expect(reissued.contains("was gone"), "\(reissued)")
        let newToken = try #require(value(after: "Token: ", in: reissued))
        #expect(newToken != firstToken)
        #expect(try String(contentsOfFile: checkout.tokenFile, encoding: .utf8) == "\(newToken)\n")
        let mode = try FileManager.default.attributesOfItem(atPath: checkout.tokenFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let newDashboard = try #require(value(after: "Dashboard: ", in: reissued))
        #expect(try logIn(to: newDashboard, token: newToken, in: checkout.logs).login.status == 303)
        #expect(try logIn(to: newDashboard, token: firstToken, in: checkout.logs).login.status != 303)
        #expect(third.stop() == 0)
        #expect(checkout.installRequests == "--serve\n--serve\n--serve\n")
    }
}
