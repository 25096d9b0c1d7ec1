import Foundation
import PinsetTestSupport
import Testing

/// `pinset review … --server URL`: the CLI as a client of a running server's admin API over TLS, on a machine
/// without the database. It prints what the same command prints on a server host, the server's rules refuse what
/// they refuse there, and a token never goes to a server that is not verified or over plain HTTP off loopback.
@Suite(.serialized) struct CLIServerModeTests {
    /// The review team of `CLIReviewTests`, its server's admin API on TLS with a certificate for 127.0.0.1 from the
    /// test CA, and `pinset` run on a machine with no data directory.
    struct RemoteTeam {
        let team: CLIReviewTests.Team
        let server: RunningServer
        let url: String

        var cli: PinsetCLI { team.served.cli }
        var viaServer: [String] { ["--server", url, "--server-ca", team.served.ca] }

        /// `pinset ARGUMENTS` on a machine with no data directory: the token from a file, or none.
        func remote(_ admin: String?, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessRunner.Output {
            let token = admin.map { ["--token-file", team.tokens[$0]!] } ?? []
            return try ProcessRunner.run(PinsetCLI.binary, arguments + token, environment: ["PINSET_DATA_DIR": cli.directory.file("no-data-here")].merging(environment) { _, new in new })
        }

        func stop() {
            server.stop()
            team.served.stop()
        }
    }

    static func remoteTeam() throws -> RemoteTeam {
        let team = try CLIReviewTests.team()
        let cli = team.served.cli
        // The admin API's certificate, for its loopback address, from the test CA.
        let key = cli.directory.file("admin-api.key"), request = cli.directory.file("admin-api.csr"), cert = cli.directory.file("admin-api.pem")
        let extensions = try cli.directory.write("admin-api.ext", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        for arguments in [
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key],
            ["req", "-new", "-key", key, "-out", request, "-subj", "/CN=admin-api"],
            ["x509", "-req", "-in", request, "-CA", team.served.ca, "-CAkey", cli.directory.file("ca.key"), "-CAcreateserial", "-days", "30", "-out", cert, "-extfile", extensions],
        ] {
            let made = try ProcessRunner.run("openssl", arguments)
            #expect(made.status == 0, "\(made.stderr)")
        }
        chmod(key, 0o600)
        let apiPort = try FreePort.pick()
        let server = try RunningServer(cli: cli, extraConfiguration: [
            "api": ["host": "127.0.0.1", "port": apiPort, "certificate": cert, "privateKey": key],
            "monitoring": ["intervalSeconds": 600, "caFile": team.served.ca, "connectTo": ["api.example.test": "127.0.0.1"]],
        ])
        return RemoteTeam(team: team, server: server, url: "https://127.0.0.1:\(apiPort)")
    }

    @Test func reviewCommandsRunThroughTheAdminAPIAndPrintWhatTheyPrintOnTheServerHost() throws {
        let remoteTeam = try Self.remoteTeam()
        defer { remoteTeam.stop() }
        let team = remoteTeam.team, cli = remoteTeam.cli, url = remoteTeam.url, viaServer = remoteTeam.viaServer
        func remote(_ admin: String?, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessRunner.Output {
            try remoteTeam.remote(admin, arguments, environment: environment)
        }
        let proposed = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--request-reason", "backup key"] + team.served.reach)
        #expect(proposed.status == 0, "\(proposed.combined)")

        // The same output as on the server host, as a table and as JSON.
        for arguments in [["review", "list"], ["review", "list", "--json"], ["review", "list", "acme", "--all"], ["review", "show", "1"]] {
            let local = try team.run("bob", arguments + (arguments[1] == "show" ? team.served.reach : []))
            let through = try remote("bob", arguments + viaServer)
            #expect(local.status == 0 && through.status == 0, "\(arguments): \(local.combined) \(through.combined)")
            #expect(through.stdoutText == local.stdoutText, "\(arguments):\n\(through.stdoutText)\n---\n\(local.stdoutText)")
        }
        #expect(try remote("bob", ["review", "show", "1"] + viaServer).stdoutText.contains("live check of api.example.test after the edit: matches"))
        // The server's URL may come from the environment.
        let fromEnvironment = try remote("bob", ["review", "list", "--server-ca", team.served.ca], environment: ["PINSET_SERVER": url])
        #expect(fromEnvironment.status == 0 && fromEnvironment.stdoutText.contains("backup key"), "\(fromEnvironment.combined)")

        // Refused, leaving the database as it was: the server's rules, and the client's own.
        let before = try cli.databaseDump()
        let own = try remote("alice", ["review", "approve", "1"] + viaServer)
        #expect(own.status != 0 && own.stderr.contains("made by alice") && own.stderr.contains("HTTP 409"), "\(own.combined)")
        let viewer = try remote("dave", ["review", "approve", "1"] + viaServer)
        #expect(viewer.status != 0 && viewer.stderr.contains("may not approve") && viewer.stderr.contains("HTTP 403"), "\(viewer.combined)")
        let anonymous = try remote(nil, ["review", "approve", "1"] + viaServer)
        #expect(anonymous.status != 0 && anonymous.stderr.contains("--token-file"), "\(anonymous.combined)")
        // Several times: the client may give up on the handshake before, while or after its reader joins the
        // connection, and each of those must end in the same refusal, never a crash.
        for _ in 0..<8 {
            let unverified = try remote("bob", ["review", "approve", "1", "--server", url])
            #expect(unverified.status != 0 && unverified.stderr.contains("Could not reach the admin API"), "the system's roots do not know the test CA: \(unverified.combined)")
        }
        let plain = try remote("bob", ["review", "approve", "1", "--server", "http://192.0.2.1:9443"])
        #expect(plain.status != 0 && plain.stderr.contains("clear text"), "\(plain.combined)")
        // The admin API's certificate names the address 127.0.0.1 only. Asked for by a name (here localhost, which
        // resolves to that address), the client refuses it before the token is written: whoever can point a name at
        // an address of theirs and holds a certificate for that address must not get the token.
        let byName = try remote("bob", ["review", "list", "--server", url.replacingOccurrences(of: "127.0.0.1", with: "localhost"), "--server-ca", team.served.ca])
        #expect(byName.status != 0 && byName.stderr.contains("does not name localhost") && byName.stderr.contains("the token was not sent"), "\(byName.combined)")
        // A token pasted into the URL is refused without being repeated on the terminal.
        let pasted = "pinset_pastedSecretValue"
        for server in ["https://bob:\(pasted)@127.0.0.1:9443", "https://\(pasted)@127.0.0.1:9443/admin", "https://127.0.0.1:9443/?token=\(pasted)",
                       "http://192.0.2.1:9443/#\(pasted)"] {
            let withCredentials = try remote("bob", ["review", "approve", "1", "--server", server])
            #expect(withCredentials.status != 0 && !withCredentials.combined.contains(pasted), "\(withCredentials.combined)")
        }
        let localOption = try remote("bob", ["review", "approve", "1", "--connect-to", "127.0.0.1"] + viaServer)
        #expect(localOption.status != 0 && localOption.stderr.contains("--connect-to applies only without --server"), "\(localOption.combined)")
        // Nothing is taken as done from something that is not the API: a closed port, or a web server answering
        // 200 with a page.
        let closedPort = try FreePort.pick()
        let unreachable = try remote("bob", ["review", "approve", "1", "--server", "http://127.0.0.1:\(closedPort)"])
        #expect(unreachable.status != 0 && unreachable.stderr.contains("Could not reach the admin API"), "\(unreachable.combined)")
        let site = cli.directory.file("not-an-api")
        try FileManager.default.createDirectory(atPath: site + "/api/v1/change-requests", withIntermediateDirectories: true)
        try Data("<html>hello</html>".utf8).write(to: URL(fileURLWithPath: site + "/api/v1/change-requests/1"))
        let webPort = try FreePort.pick()
        let web = try BackgroundProcess("python3", ["-m", "http.server", "--bind", "127.0.0.1", "--directory", site, "\(webPort)"],
                                        logDirectory: cli.directory.path, name: "http-server")
        defer { web.stop() }
        #expect(FreePort.waitUntilListening(port: webPort))
        let notAnAPI = try remote("bob", ["review", "show", "1", "--server", "http://localhost:\(webPort)"])
        #expect(notAnAPI.status != 0 && notAnAPI.stderr.contains("without a JSON document"), "\(notAnAPI.combined)")
        #expect(try cli.databaseDump() == before)

        // bob approves through the server: its live-chain check and its audit, under bob's name.
        let approved = try remote("bob", ["review", "approve", "1"] + viaServer)
        #expect(approved.status == 0 && approved.stderr.contains("Approved and applied change request 1 of alice"), "\(approved.combined)")
        let entry = try cli.run(["log", "--customer", "acme", "--limit", "1", "--json"])
        let audit = (try JSONSerialization.jsonObject(with: Data(entry.stdout)) as? [[String: Any]])?.first
        #expect(audit?["actor"] as? String == "bob" && (audit?["details"] as? String)?.contains("approved by bob") == true, "\(entry.stdoutText)")
        let replay = try remote("bob", ["review", "approve", "1"] + viaServer)
        #expect(replay.status != 0 && replay.stderr.contains("HTTP 409"), "\(replay.combined)")

        // Pin edits through the server become change requests there: a renewed certificate from its file, a key
        // removed by its hash; options only this host could honour are refused.
        let renewed = try CLIConnectToTests.renewedCertificate(in: cli.directory)
        let renewedPin = try CLIPinSourceTests.opensslPin(certificate: renewed.cert)
        let added = try remote("alice", ["pin", "add", "acme", "api.example.test", "--certificate", renewed.cert, "--request-reason", "renewal"] + viaServer)
        #expect(added.status == 0 && added.stderr.contains("Change request 2 opened for 'acme'"), "\(added.combined)")
        #expect(try remote("bob", ["review", "show", "2"] + viaServer).stdoutText.contains("api.example.test: + \(renewedPin)"))
        let removed = try remote("alice", ["pin", "remove", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--request-reason", "retire the spare"] + viaServer)
        #expect(removed.status == 0 && removed.stderr.contains("Change request 3 opened"), "\(removed.combined)")
        let labelled = try remote("alice", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--label", "x", "--request-reason", "r"] + viaServer)
        #expect(labelled.status != 0 && labelled.stderr.contains("--label applies only without --server"), "\(labelled.combined)")
        let unreasoned = try remote("alice", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash] + viaServer)
        #expect(unreasoned.status != 0 && unreasoned.stderr.contains("HTTP 400"), "the API asks every edit for a reason: \(unreasoned.combined)")

        // A report-only window asked for by the editor waits for bob, who sees it in the request and approves it.
        for request in ["2", "3"] { #expect(try remote("bob", ["review", "reject", request, "--note", "not now"] + viaServer).status == 0) }
        let asked = try remote("alice", ["host", "report-only", "acme", "api.example.test", "--until", "6h", "--reason", "renewal served an unpinned key"] + viaServer)
        #expect(asked.status == 0 && asked.stderr.contains("Change request 4 opened for 'acme'") && asked.stderr.contains("stays enforcing"), "\(asked.combined)")
        #expect(try cli.run(["host", "list", "acme"]).stdoutText.contains("report-only until") == false, "nothing is set before review")
        let shownWindow = try remote("bob", ["review", "show", "4"] + viaServer)
        #expect(shownWindow.stdoutText.contains("api.example.test: report-only until"), "\(shownWindow.combined)")
        let setWindow = try remote("bob", ["review", "approve", "4"] + viaServer)
        #expect(setWindow.status == 0, "\(setWindow.combined)")
        let hosts = try cli.run(["host", "list", "acme"])
        #expect(hosts.stdoutText.contains("report-only until"), "\(hosts.combined)")
    }

    /// The rest of the admin commands through the API: reads print what they print on the server host; writes
    /// follow the server's roles, and options only the server host could honour are refused before anything is sent.
    @Test func customerHostRotationIdentityAndLogCommandsRunThroughTheAdminAPI() throws {
        let remoteTeam = try Self.remoteTeam()
        defer { remoteTeam.stop() }
        let cli = remoteTeam.cli, viaServer = remoteTeam.viaServer
        func remote(_ admin: String?, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessRunner.Output {
            try remoteTeam.remote(admin, arguments, environment: environment)
        }
        #expect(try cli.run(["admin", "add", "olga", "--role", "operator"]).status == 0)
        let olgaToken = cli.directory.file("olga.token")
        #expect(try cli.run(["admin", "token", "olga", "--label", "test", "--out", olgaToken]).status == 0)
        func asOlga(_ arguments: [String]) throws -> ProcessRunner.Output {
            try remote(nil, arguments + ["--token-file", olgaToken] + viaServer)
        }
        let spare = LiveChainGuardTests.spareHash

        // Reads: the same output as on the server host (where no token is needed), as tables and as JSON.
        for (arguments, admin) in [
            (["customer", "list"], "olga"), (["customer", "list", "--json"], "olga"), (["log", "--customer", "acme", "--limit", "5"], "bob"),
            (["log", "--customer", "acme", "--json"], "dave"), (["rotation", "status", "acme"], "dave"), (["rotation", "status", "acme", "--json"], "bob"),
            (["reports", "acme", "--json"], "dave"), (["customer", "show", "acme"], "dave"), (["customer", "show", "acme", "--json"], "bob"),
            (["pin", "list", "acme", "api.example.test"], "dave"), (["host", "list", "acme"], "alice"), (["host", "list", "acme", "--json"], "dave"),
        ] {
            let local = try cli.run(arguments)
            let through = admin == "olga" ? try asOlga(arguments) : try remote(admin, arguments + viaServer)
            #expect(local.status == through.status && !through.stdoutText.isEmpty, "\(arguments): \(local.combined) \(through.combined)")
            #expect(through.stdoutText == local.stdoutText, "\(arguments):\n\(through.stdoutText)\n---\n\(local.stdoutText)")
        }
        #expect(try remote("dave", ["rotation", "status", "acme"] + viaServer).status == 4, "no next key: the exit status scripts read")
        let identity = try remote("dave", ["customer", "identity", "show", "acme"] + viaServer)
        #expect(identity.status == 0 && identity.stdoutText.contains("signer             default") && !identity.stdoutText.contains("keyFile"), "\(identity.combined)")

        // Refused, leaving the database as it was.
        let before = try cli.databaseDump()
        for (admin, arguments, why) in [
            ("alice", ["customer", "add", "initech"], "HTTP 403"),
            ("olga", ["customer", "add", "initech", "--key-type", "p256"], "applies only without --server"),
            ("alice", ["host", "add", "acme", "www.example.test", "--certificate", cli.directory.file("ca.pem")], "applies only without --server"),
            ("alice", ["host", "remove", "acme", "api.example.test"], "requires review"),
            ("alice", ["host", "update", "acme", "api.example.test", "--include-subdomains", "true"], "requires review"),
            ("alice", ["host", "update", "acme", "api.example.test", "--port", "8443", "--connect-to", "127.0.0.1"], "applies only without --server"),
            ("alice", ["rotation", "add-next", "acme", "api.example.test", "--hash", spare, "--reason", "next renewal"], "requires review"),
            ("alice", ["rotation", "complete", "acme", "api.example.test", "--reason", "renewed", "--ca-file", cli.directory.file("ca.pem")], "applies only without --server"),
            ("alice", ["rotation", "complete", "acme", "api.example.test", "--reason", "renewed"], "requires review"),
            ("alice", ["host", "update", "acme", "api.example.test", "--unmonitored", "no checks"], "requires review"),
            ("alice", ["customer", "identity", "rotate", "acme", "--key-type", "p256", "--replace-trust-anchor"], "HTTP 403"),
            ("olga", ["customer", "identity", "rotate", "acme", "--key-type", "p256"], "trust anchor"),
            ("olga", ["customer", "identity", "rotate", "acme", "--import-key", cli.directory.file("ca.key"), "--import-certificate", cli.directory.file("ca.pem")], "applies only without --server"),
            ("bob", ["customer", "remove", "globex"], "HTTP 404"),
            ("bob", ["customer", "update", "acme", "--legacy-clients"], "HTTP 403"),
            ("bob", ["log"], "give --customer"),
        ] {
            let refused = admin == "olga" ? try asOlga(arguments) : try remote(admin, arguments + viaServer)
            #expect(refused.status != 0 && refused.stderr.contains(why), "\(admin) \(arguments): \(refused.combined)")
        }
        #expect(try cli.databaseDump() == before)

        // Done through the server, audited under each admin's name.
        let added = try asOlga(["customer", "add", "initech"])
        #expect(added.status == 0 && added.stderr.contains("Added customer 'initech' (its pin edits need a second admin)"), "\(added.combined)")
        let host = try remote("alice", ["host", "add", "acme", "www.example.test"] + viaServer)
        #expect(host.status == 0 && host.stderr.contains("Added www.example.test:443 to 'acme'"), "\(host.combined)")
        let unmonitored = try asOlga(["host", "update", "acme", "www.example.test", "--unmonitored", "staging only"])
        #expect(unmonitored.status == 0 && unmonitored.stderr.contains("Updated www.example.test"), "\(unmonitored.combined)")
        let moved = try asOlga(["host", "update", "acme", "www.example.test", "--port", "8443"])
        #expect(moved.status == 0 && moved.stderr.contains("Updated www.example.test"), "an unmonitored host's port needs no live chain: \(moved.combined)")
        #expect(try asOlga(["host", "remove", "acme", "www.example.test"]).status == 0)
        let next = try asOlga(["rotation", "add-next", "acme", "api.example.test", "--hash", spare, "--reason", "next renewal"])
        #expect(next.status == 0 && next.stdoutText.contains("added   \(spare) (next)"), "\(next.combined)")
        // A next key given as a public key reaches the server whole: legacy clients match an RSA key itself.
        let nextKey = cli.directory.file("next-rsa.pem"), nextPublic = cli.directory.file("next-rsa.pub")
        #expect(try ProcessRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", nextKey]).status == 0)
        #expect(try ProcessRunner.run("openssl", ["pkey", "-in", nextKey, "-pubout", "-out", nextPublic]).status == 0)
        let keyed = try asOlga(["rotation", "add-next", "acme", "api.example.test", "--public-key", nextPublic, "--reason", "RSA key of the renewal after"])
        #expect(keyed.status == 0, "\(keyed.combined)")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["pin", "list", "acme", "api.example.test", "--json"]).stdout)) as? [String: Any])
        let nextPins = ((listed["hosts"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]])?.filter { ($0["next"] as? Bool) == true } ?? []
        #expect(nextPins.count == 2 && nextPins.contains { ($0["hasPublicKey"] as? Bool) == true && ($0["legacyUse"] as? [String]) == ["pk"] }, "\(nextPins)")
        let localStatus = try cli.run(["rotation", "status", "acme"])
        let remoteStatus = try remote("dave", ["rotation", "status", "acme"] + viaServer)
        // The seconds left until a key is safe are counted when each command runs, which may be a second apart.
        func withoutCountdown(_ text: String) -> String {
            text.replacingOccurrences(of: #"for \d+ s \(until"#, with: "for N s (until", options: .regularExpression)
        }
        #expect(localStatus.status == 3 && remoteStatus.status == 3 && withoutCountdown(remoteStatus.stdoutText) == withoutCountdown(localStatus.stdoutText)
                && remoteStatus.stdoutText.contains(spare), "\(remoteStatus.combined)\n---\n\(localStatus.combined)")
        let complete = try asOlga(["rotation", "complete", "acme", "api.example.test", "--reason", "renewal checked"])
        #expect(complete.status == 0 && complete.stderr.contains("Nothing to do"), "the live key is pinned and the spares are next: \(complete.combined)")
        let pending = try asOlga(["customer", "identity", "rotate", "acme", "--key-type", "p256"])
        let shownCertificate = pending.stderr.split(separator: "\n").last.map { $0.replacingOccurrences(of: " (HTTP 409)", with: "") } ?? ""
        #expect(pending.status != 0 && pending.stderr.contains("kept pending") && !shownCertificate.isEmpty, "\(pending.combined)")
        let rotated = try asOlga(["customer", "identity", "rotate", "acme", "--key-type", "p256", "--replace-trust-anchor"])
        #expect(rotated.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == shownCertificate, "the certificate shown is the one installed")
        #expect(rotated.status == 0 && rotated.stderr.contains("made on the server"), "\(rotated.combined)")
        let shown = try cli.run(["customer", "identity", "show", "acme"])
        #expect(shown.stdoutText.contains("signer             own") && shown.stdoutText.contains(rotated.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)),
                "the anchor printed through the server is the one the server signs with: \(shown.stdoutText)")
        let legacy = try asOlga(["customer", "update", "globex", "--legacy-clients"])
        #expect(legacy.status == 0 && legacy.stderr.contains("'globex' now serves legacy clients"), "\(legacy.combined)")
        let gone = try asOlga(["customer", "remove", "globex"])
        #expect(gone.status == 0 && gone.stderr.contains("Removed customer 'globex'"), "\(gone.combined)")
        // Newest first: the identity, two next keys, the host's removal, its port and monitoring by olga; its addition
        // by alice (a completion that changed nothing is not an entry).
        let actors = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(["log", "--customer", "acme", "--limit", "7", "--json"]).stdout)) as? [[String: Any]])
        #expect(actors.compactMap { $0["actor"] as? String } == ["olga", "olga", "olga", "olga", "olga", "olga", "alice"], "\(actors)")
        // On the server host, a token file acts only where the command acts as a named admin there; elsewhere it
        // is refused rather than ignored.
        let ignored = try cli.run(["customer", "list", "--token-file", olgaToken])
        #expect(ignored.status != 0 && ignored.stderr.contains("acts as the token's admin only through a server"), "\(ignored.combined)")
    }
}
