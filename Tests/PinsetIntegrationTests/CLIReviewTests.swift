import Foundation
import PinsetTestSupport
import Testing

/// Two-person review through the `pinset` binary, with the live-chain check against a real `openssl s_server`:
/// an editor's pin edit waits as a change request, only another admin with the reviewer role of that customer
/// applies it, and every refused call leaves the database as it was.
@Suite(.serialized) struct CLIReviewTests {
    struct Team {
        let served: LiveChainGuardTests.Served
        let tokens: [String: String]

        func run(_ admin: String?, _ arguments: [String]) throws -> ProcessRunner.Output {
            try served.cli.run(arguments + (admin.map { ["--token-file", tokens[$0]!] } ?? []))
        }
    }

    /// acme with its live leaf pinned and review required; alice edits and reviews acme, bob reviews acme, carol
    /// reviews globex, dave views acme; each with a token file.
    static func team() throws -> Team {
        let served = try LiveChainGuardTests.served()
        let cli = served.cli
        let pinned = try cli.run(["pin", "add", "acme", "api.example.test", "--from-host", "api.example.test:\(served.port)"] + served.reach)
        #expect(pinned.status == 0, "\(pinned.combined)")
        #expect(try cli.run(["customer", "add", "globex"]).status == 0)
        var tokens: [String: String] = [:]
        for (name, roles) in [("alice", ["editor:acme", "reviewer:acme"]), ("bob", ["reviewer:acme"]), ("carol", ["reviewer:globex"]), ("dave", ["viewer:acme"])] {
            let added = try cli.run(["admin", "add", name] + roles.flatMap { ["--role", $0] })
            #expect(added.status == 0, "\(added.combined)")
            let path = cli.directory.file("\(name).token")
            let token = try cli.run(["admin", "token", name, "--label", "test", "--out", path])
            #expect(token.status == 0, "\(token.combined)")
            tokens[name] = path
        }
        #expect(try cli.run(["admin", "require-review", "acme"]).status == 0)
        return Team(served: served, tokens: tokens)
    }

    func pins(_ team: Team) throws -> Set<String> {
        let list = try team.served.cli.run(["pin", "list", "acme", "api.example.test", "--json"])
        let document = try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [String: Any]
        let pins = (document?["hosts"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]] ?? []
        return Set(pins.compactMap { $0["pinSHA256"] as? String })
    }

    @Test func anEditWaitsForAnotherReviewerAndIsAppliedOnceAfterTheLiveCheck() throws {
        let team = try Self.team()
        defer { team.served.stop() }
        let cli = team.served.cli
        let spare = LiveChainGuardTests.spareHash
        let before = try pins(team)

        let proposed = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--hash", spare, "--request-reason", "backup key for the renewal"])
        #expect(proposed.status == 0, "\(proposed.combined)")
        #expect(proposed.stderr.contains("Change request 1 opened"), "\(proposed.stderr)")
        #expect(try pins(team) == before, "nothing is published before approval")

        // Refused, each leaving the database unchanged: the author, a reviewer of another customer, a viewer,
        // no token, a token that is not one, and a revoked one.
        let unchanged = try cli.databaseDump()
        for (admin, why) in [("alice", "made by alice"), ("carol", "no change request 1"), ("dave", "may not approve")] {
            let refused = try team.run(admin, ["review", "approve", "1"] + team.served.reach)
            // Each is refused for its own reason, not the first rule that happens to apply.
            #expect(refused.status != 0 && refused.stderr.contains(why), "\(admin): \(refused.combined)")
        }
        let anonymous = try cli.run(["review", "approve", "1"])
        #expect(anonymous.status != 0 && anonymous.stderr.contains("--token-file"), "\(anonymous.combined)")
        let forgedPath = cli.directory.file("forged.token")
        try Data("pinset_\(String(repeating: "A", count: 43))\n".utf8).write(to: URL(fileURLWithPath: forgedPath))
        chmod(forgedPath, 0o600)
        let forged = try cli.run(["review", "approve", "1", "--token-file", forgedPath])
        #expect(forged.status != 0 && forged.stderr.contains("not accepted"), "\(forged.combined)")
        #expect(try cli.databaseDump() == unchanged)

        // The reviewer sees the edit and how the result fares against the live chain.
        let shown = try team.run("bob", ["review", "show", "1"] + team.served.reach)
        #expect(shown.status == 0, "\(shown.combined)")
        #expect(shown.stdoutText.contains("api.example.test: + \(spare)") && shown.stdoutText.contains("after the edit: matches (the chain api.example.test:\(team.served.port) serves)"), "\(shown.stdoutText)")

        // A request whose result would lock apps out is refused at approval and stays open.
        let locking = try team.run("alice", ["pin", "remove", "acme", "api.example.test", "--hash", team.served.leafPin, "--request-reason", "wrong key"])
        #expect(locking.status == 0, "\(locking.combined)")
        let lockingRefused = try team.run("bob", ["review", "approve", "2"] + team.served.reach)
        #expect(lockingRefused.status != 0 && lockingRefused.stderr.contains("Refused"), "\(lockingRefused.combined)")
        let open = try team.run("bob", ["review", "list", "--json"])
        let ids = (try JSONSerialization.jsonObject(with: Data(open.stdout)) as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        #expect(Set(ids) == [1, 2], "\(open.combined)")

        let approved = try team.run("bob", ["review", "approve", "1"] + team.served.reach)
        #expect(approved.status == 0, "\(approved.combined)")
        #expect(try pins(team) == before.union([spare]))
        let log = try cli.run(["log", "--customer", "acme", "--json", "--limit", "1"])
        let entry = (try JSONSerialization.jsonObject(with: Data(log.stdout)) as? [[String: Any]])?.first
        #expect(entry?["actor"] as? String == "bob")
        #expect((entry?["details"] as? String)?.contains("change request 1 by alice, approved by bob") == true, "\(log.stdoutText)")

        // Replayed: nothing happens.
        let afterApproval = try cli.databaseDump()
        let replayed = try team.run("bob", ["review", "approve", "1"] + team.served.reach)
        #expect(replayed.status != 0 && replayed.stderr.contains("applied by bob already"), "\(replayed.combined)")
        #expect(try cli.databaseDump() == afterApproval)

        // The author withdraws the other request.
        let withdrawn = try team.run("alice", ["review", "reject", "2", "--note", "withdrawn"])
        #expect(withdrawn.status == 0, "\(withdrawn.combined)")
        let remaining = try team.run("bob", ["review", "list", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(remaining.stdout)) as? [Any])?.isEmpty == true, "\(remaining.combined)")

        // The requests of an admin disabled since (a stolen token, someone who left) are not applied.
        let another = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "--request-reason", "second backup"])
        #expect(another.status == 0, "\(another.combined)")
        #expect(try cli.run(["admin", "update", "alice", "--disable"]).status == 0)
        let beforeDisabled = try cli.databaseDump()
        let orphaned = try team.run("bob", ["review", "approve", "3"] + team.served.reach)
        #expect(orphaned.status != 0 && orphaned.stderr.contains("alice was disabled"), "voided by the disabling: \(orphaned.combined)")
        #expect(try cli.databaseDump() == beforeDisabled)
    }

    @Test func tokensAreKeptPrivateAndStopWorkingWhenRevokedOrTheAdminIsDisabled() throws {
        let team = try Self.team()
        defer { team.served.stop() }
        let cli = team.served.cli
        chmod(team.tokens["dave"]!, 0o644)
        let open = try team.run("dave", ["review", "list"])
        #expect(open.status != 0 && open.stderr.contains("chmod 600"), "\(open.combined)")
        chmod(team.tokens["dave"]!, 0o600)
        #expect(try team.run("dave", ["review", "list"]).status == 0)

        #expect(try cli.run(["admin", "update", "dave", "--disable"]).status == 0)
        #expect(try team.run("dave", ["review", "list"]).stderr.contains("not accepted"))
        #expect(try cli.run(["admin", "update", "dave", "--enable"]).status == 0)
        #expect(try team.run("dave", ["review", "list"]).stderr.contains("not accepted"), "disabling revoked the token; enabling does not bring it back")
        unlink(team.tokens["dave"]!)
        let reissued = try cli.run(["admin", "token", "dave", "--label", "again", "--out", team.tokens["dave"]!])
        #expect(reissued.status == 0, "\(reissued.combined)")
        #expect(try team.run("dave", ["review", "list"]).status == 0)
        #expect(try cli.run(["admin", "revoke", "dave"]).status == 0)
        #expect(try team.run("dave", ["review", "list"]).stderr.contains("not accepted"))

        // A viewer proposes nothing; an editor of a customer without review edits it directly, under its name.
        let viewerEdit = try team.run("dave", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--request-reason", "x"])
        #expect(viewerEdit.status != 0)
        #expect(try cli.run(["admin", "require-review", "acme", "--no-required"]).status == 0)
        let direct = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash] + team.served.reach)
        #expect(direct.status == 0, "\(direct.combined)")
        let log = try cli.run(["log", "--customer", "acme", "--json", "--limit", "1"])
        #expect((try JSONSerialization.jsonObject(with: Data(log.stdout)) as? [[String: Any]])?.first?["actor"] as? String == "alice")
        // The token never reaches the database or the log.
        let token = try String(contentsOfFile: team.tokens["alice"]!, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!(try cli.databaseDump()).contains(token))
    }

    /// On the server host a token makes `host report-only` act as its admin, as through the server: an editor's
    /// window waits for another reviewer, a viewer's is refused, and nothing is set before approval.
    @Test func aReportOnlyWindowOnTheServerHostActsAsTheTokensAdmin() throws {
        let team = try Self.team()
        defer { team.served.stop() }
        let cli = team.served.cli
        let window = ["host", "report-only", "acme", "api.example.test", "--until", "6h", "--reason", "renewal served an unpinned key"]

        let unchanged = try cli.databaseDump()
        let viewer = try team.run("dave", window)
        #expect(viewer.status != 0 && viewer.stderr.contains("Admin dave may not"), "\(viewer.combined)")
        #expect(try cli.databaseDump() == unchanged)

        let asked = try team.run("alice", window)
        #expect(asked.status == 0 && asked.stderr.contains("Change request 1 opened for 'acme'") && asked.stderr.contains("stays enforcing"), "\(asked.combined)")
        #expect(!asked.stderr.contains("full rights"), "the token is used, so nothing warns that it is not: \(asked.combined)")
        #expect(try cli.run(["host", "list", "acme"]).stdoutText.contains("report-only until") == false, "nothing is set before review")
        let own = try team.run("alice", ["review", "approve", "1"])
        #expect(own.status != 0 && own.stderr.contains("made by alice"), "\(own.combined)")

        // The server's own bound, from its configuration: a 6-hour window is not approved under a 1-hour maximum.
        let config = try cli.directory.write("one-hour.json", #"{"reportOnlyMaximumHours": 1}"#)
        let bounded = try team.run("bob", ["review", "approve", "1", "--config", config])
        #expect(bounded.status != 0 && bounded.stderr.contains("the limit is 3600 s (1 h)"), "\(bounded.combined)")
        let boundedBreakGlass = try team.run("bob", ["review", "break-glass", "1", "--reason", "outage", "--config", config])
        #expect(boundedBreakGlass.status != 0 && boundedBreakGlass.stderr.contains("--config") == false, "the option is known: \(boundedBreakGlass.combined)")
        #expect(try cli.run(["host", "list", "acme"]).stdoutText.contains("report-only until") == false)

        let approved = try team.run("bob", ["review", "approve", "1"])
        #expect(approved.status == 0, "\(approved.combined)")
        #expect(try cli.run(["host", "list", "acme"]).stdoutText.contains("report-only until"))
        let log = try cli.run(["log", "--customer", "acme", "--json", "--limit", "1"])
        let entry = (try JSONSerialization.jsonObject(with: Data(log.stdout)) as? [[String: Any]])?.first
        #expect(entry?["actor"] as? String == "bob" && (entry?["details"] as? String)?.contains("approved by bob: renewal served an unpinned key") == true, "\(log.stdoutText)")
    }

    /// An operator applies a request without review, with a reason, and the live-chain check still runs; the
    /// application is listed until another admin acknowledges it.
    @Test func anOperatorBreaksGlassWithAReasonAndAnotherAdminAcknowledges() throws {
        let team = try Self.team()
        defer { team.served.stop() }
        let cli = team.served.cli
        #expect(try cli.run(["admin", "add", "olga", "--role", "operator"]).status == 0)
        let olga = cli.directory.file("olga.token")
        #expect(try cli.run(["admin", "token", "olga", "--label", "test", "--out", olga]).status == 0)
        func asOlga(_ arguments: [String]) throws -> ProcessRunner.Output { try cli.run(arguments + ["--token-file", olga]) }
        let before = try pins(team)

        let locking = try team.run("alice", ["pin", "remove", "acme", "api.example.test", "--hash", team.served.leafPin, "--request-reason", "wrong key"])
        #expect(locking.status == 0, "\(locking.combined)")
        let spare = try team.run("alice", ["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--request-reason", "backup key"])
        #expect(spare.status == 0, "\(spare.combined)")

        let unchanged = try cli.databaseDump()
        let reviewer = try team.run("bob", ["review", "break-glass", "2", "--reason", "outage"] + team.served.reach)
        #expect(reviewer.status != 0 && reviewer.stderr.contains("only an operator may break glass"), "\(reviewer.combined)")
        let lockout = try asOlga(["review", "break-glass", "1", "--reason", "outage"] + team.served.reach)
        #expect(lockout.status != 0 && lockout.stderr.contains("Refused"), "breaking glass does not skip the lock-out guard: \(lockout.combined)")
        #expect(try cli.databaseDump() == unchanged)

        let applied = try asOlga(["review", "break-glass", "2", "--reason", "no reviewer reachable during the renewal"] + team.served.reach)
        #expect(applied.status == 0 && applied.stderr.contains("WITHOUT REVIEW"), "\(applied.combined)")
        #expect(try pins(team) == before.union([LiveChainGuardTests.spareHash]))
        let listed = try team.run("dave", ["review", "list"])
        #expect(listed.stdoutText.contains("Applied without review") && listed.stdoutText.contains("no reviewer reachable during the renewal"), "\(listed.combined)")

        let ownAcknowledgement = try asOlga(["review", "acknowledge", "1"])
        #expect(ownAcknowledgement.status != 0 && ownAcknowledgement.stderr.contains("olga applied it") && ownAcknowledgement.stderr.contains("took no part in it"), "\(ownAcknowledgement.combined)")
        let viewer = try team.run("dave", ["review", "acknowledge", "1"])
        #expect(viewer.status != 0 && viewer.stderr.contains("may not acknowledge"), "\(viewer.combined)")
        let acknowledged = try team.run("bob", ["review", "acknowledge", "1", "--note", "checked with the CA"])
        #expect(acknowledged.status == 0, "\(acknowledged.combined)")
        let remaining = try team.run("dave", ["review", "list", "--break-glass", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(remaining.stdout)) as? [Any])?.isEmpty == true, "\(remaining.combined)")
        let history = try team.run("dave", ["review", "list", "--break-glass", "--all", "--json"])
        let entry = (try JSONSerialization.jsonObject(with: Data(history.stdout)) as? [[String: Any]])?.first
        #expect(entry?["appliedBy"] as? String == "olga" && entry?["acknowledgedBy"] as? String == "bob", "\(history.combined)")
    }
}
