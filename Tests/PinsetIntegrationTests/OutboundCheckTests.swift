import Foundation
import PinsetTestSupport
import Testing

/// An editor cannot turn the server's live-chain checks into a port scanner of its own network: through the admin
/// API of a real `pinset serve`, a host whose name leads to loopback is refused before any connection (counted by
/// a listener on 127.0.0.1), by dry runs, edits, approvals and the monitor alike; where the configuration allows
/// loopback, a repeated dry run connects once, an admin's checks are budgeted, and an editor cannot tell an open
/// port from a closed one by the answer.
@Suite(.serialized) struct OutboundCheckTests {
    static let hashes = [
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=",
        "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=", "BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ=", "BQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQU=",
    ]

    /// acme requires review, open does not; alice edits both, bob reviews acme, olive is an operator.
    static func deploy(configuration: (Int) -> [String: Any], setup: [[String]] = []) throws -> AdminAPITests.Deployment {
        let cli = try PinsetCLI.initialized()
        for arguments in [
            ["customer", "add", "acme"], ["customer", "add", "open"], ["admin", "require-review", "acme"],
            ["admin", "add", "alice", "--role", "editor:acme", "--role", "editor:open"], ["admin", "add", "bob", "--role", "reviewer:acme"],
            ["admin", "add", "olive", "--role", "operator"],
        ] + setup {
            let result = try cli.run(arguments)
            guard result.status == 0 else { throw Failure("pinset \(arguments.joined(separator: " ")): \(result.combined)") }
        }
        var tokens: [String: String] = [:]
        for name in ["alice", "bob", "olive"] {
            let made = try cli.run(["admin", "token", name, "--label", "outbound-test"])
            guard made.status == 0 else { throw Failure("admin token: \(made.combined)") }
            tokens[name] = made.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let apiPort = try FreePort.pick()
        let server = try RunningServer(cli: cli, extraConfiguration: configuration(apiPort))
        return AdminAPITests.Deployment(cli: cli, server: server, apiPort: apiPort, tokens: tokens, postgres: nil)
    }

    static func dryRun(_ deployment: AdminAPITests.Deployment, _ customer: String, _ host: String, hash: String, as admin: String) throws
        -> (status: Int, headers: [String: String], document: Any?) {
        try deployment.call("POST", "/api/v1/customers/\(customer)/hosts/\(host)/pins", as: admin, json: "{\"hashes\": [\"\(hash)\"], \"dryRun\": true}")
    }

    static func message(_ document: Any?) -> String {
        ((document as? [String: Any])?["error"] as? [String: Any])?["message"] as? String ?? "\(String(describing: document))"
    }

    static func summary(_ document: Any?) -> String {
        (((document as? [String: Any])?["hosts"] as? [[String: Any]])?.first?["summary"] as? String) ?? "\(String(describing: document))"
    }

    @Test func hostsThatLeadToLoopbackAreRefusedBeforeAnyConnection() throws {
        let listener = try ConnectionCountingListener(hold: 0.2)
        defer { listener.stop() }
        let port = listener.port
        let deployment = try Self.deploy(configuration: { apiPort in
            [
                "api": ["host": "127.0.0.1", "port": apiPort, "liveCheckTimeoutSeconds": 2],
                // The operator's own target is configuration: it is connected to, loopback or not.
                "monitoring": ["intervalSeconds": 600, "timeoutSeconds": 2, "connectTo": ["origin.example.test": "127.0.0.1:\(port)"]],
            ]
        }, setup: [
            // A host the monitor checks from its first pass on.
            ["host", "add", "open", "127.0.0.1", "--port", "\(port)"],
            ["pin", "add", "open", "127.0.0.1", "--hash", Self.hashes[0], "--skip-live-check", "--reason", "pinned ahead of its deployment"],
        ])
        defer { deployment.stop() }

        for host in ["127.0.0.1", "localhost"] {
            let added = try deployment.call("POST", "/api/v1/customers/acme/hosts", as: "alice", json: "{\"hostname\": \"\(host)\", \"port\": \(port)}")
            #expect(added.status == 201, "\(String(describing: added.document))")
        }
        let before = try deployment.databaseState()
        for host in ["127.0.0.1", "localhost"] {
            // An editor learns that the name is not checked, not what it resolves to.
            let refused = try Self.dryRun(deployment, "acme", host, hash: Self.hashes[1], as: "alice")
            let text = Self.message(refused.document)
            #expect(refused.status == 409, "\(host): \(text)")
            #expect(text.contains("does not connect to for live-chain checks") && text.contains("monitoring.allowedAddresses"), "\(text)")
            if host == "localhost" { #expect(!text.contains("127.0.0.1"), "the resolved address is an operator's to read: \(text)") }
            // An operator reads the addresses and the rule.
            let detailed = Self.message(try Self.dryRun(deployment, "acme", host, hash: Self.hashes[1], as: "olive").document)
            #expect(detailed.contains("loopback (127.0.0.0/8)") && detailed.contains("No connection was made") && detailed.contains("monitoring.allowedAddresses"), "\(detailed)")
            if host == "localhost" { #expect(detailed.contains("localhost resolves to 127.0.0.1"), "\(detailed)") }
        }
        // An edit applied at once checks first, and is refused the same way.
        let edit = try deployment.call("POST", "/api/v1/customers/open/hosts/127.0.0.1/pins", as: "alice",
                                       json: "{\"hashes\": [\"\(Self.hashes[1])\"], \"reason\": \"second key\"}")
        #expect(edit.status == 409 && Self.message(edit.document).contains("loopback"), "\(Self.message(edit.document))")
        #expect(try deployment.databaseState() == before, "nothing was stored by a refused check")

        // A request waits for review without a check; the reviewer's approval checks, and is refused.
        let proposed = try deployment.call("POST", "/api/v1/customers/acme/hosts/127.0.0.1/pins", as: "alice",
                                           json: "{\"hashes\": [\"\(Self.hashes[1])\"], \"reason\": \"backup key\"}")
        #expect(proposed.status == 202, "\(String(describing: proposed.document))")
        let id = try #require(((proposed.document as? [String: Any])?["changeRequest"] as? [String: Any])?["id"] as? Int)
        let shown = try deployment.call("GET", "/api/v1/change-requests/\(id)", as: "bob")
        let liveCheck = ((shown.document as? [String: Any])?["liveCheck"] as? [[String: Any]])?.first
        #expect(shown.status == 200 && liveCheck?["permitsEdit"] as? Bool == false && (liveCheck?["summary"] as? String)?.contains("loopback") == true,
                "\(String(describing: shown.document))")
        let beforeApproval = try deployment.databaseState()
        let approval = try deployment.call("POST", "/api/v1/change-requests/\(id)/approve", as: "bob", json: "{}")
        #expect(approval.status == 409 && Self.message(approval.document).contains("loopback"), "\(Self.message(approval.document))")
        #expect(try deployment.databaseState() == beforeApproval)

        // The monitor judges the addresses by the same policy.
        let monitoring = try MonitoringTests.waitForMonitoring(deployment.server, in: deployment.cli.directory) { ($0["passes"] as? Int ?? 0) >= 1 }
        let monitored = (monitoring["hosts"] as? [[String: Any]])?.first { $0["hostname"] as? String == "127.0.0.1" }
        #expect(monitored?["state"] as? String == "unreachable" && (monitored?["detail"] as? String)?.contains("loopback") == true, "\(monitoring)")
        #expect(listener.accepted == 0, "no check connected to loopback")

        // The operator's connectTo target is reached although it is loopback.
        let viaTarget = try deployment.call("POST", "/api/v1/customers/acme/hosts", as: "alice", json: "{\"hostname\": \"origin.example.test\", \"port\": 443}")
        #expect(viaTarget.status == 201)
        let checked = try Self.dryRun(deployment, "acme", "origin.example.test", hash: Self.hashes[1], as: "alice")
        #expect(checked.status == 200 && listener.accepted == 1, "\(String(describing: checked.document))")
    }

    @Test func allowedLoopbackIsCheckedOnceBudgetedAndToldAlikeWhetherOpenOrClosed() throws {
        let listener = try ConnectionCountingListener(hold: 0.2)
        defer { listener.stop() }
        let closedPort = try FreePort.pick()
        let deployment = try Self.deploy(configuration: { apiPort in
            [
                "api": ["host": "127.0.0.1", "port": apiPort, "liveChecksPerAdminPerMinute": 6, "liveCheckTimeoutSeconds": 1],
                "monitoring": ["intervalSeconds": 600, "allowedAddresses": ["127.0.0.0/8"]],
            ]
        })
        defer { deployment.stop() }
        for (host, port) in [("127.0.0.1", listener.port), ("localhost", closedPort)] {
            let added = try deployment.call("POST", "/api/v1/customers/acme/hosts", as: "alice", json: "{\"hostname\": \"\(host)\", \"port\": \(port)}")
            #expect(added.status == 201, "\(String(describing: added.document))")
        }

        // Three dry runs of one result: one connection, the rest reuse its outcome (each answered after the timeout;
        // few, so that the whole test stays well inside the 30 s a check is reused for and the budget's minute).
        var openSummaries: Set<String> = []
        for _ in 0..<3 {
            let answer = try Self.dryRun(deployment, "acme", "127.0.0.1", hash: Self.hashes[0], as: "alice")
            #expect(answer.status == 200, "\(String(describing: answer.document))")
            openSummaries.insert(Self.summary(answer.document))
        }
        #expect(listener.accepted == 1, "3 dry runs made \(listener.accepted) connections")
        #expect(openSummaries.count == 1)

        // An open port that sends nothing and a closed port read alike to an editor; an operator reads why.
        let open = try #require(openSummaries.first)
        var closedAnswer: (status: Int, headers: [String: String], document: Any?)?
        let waited = try ContinuousClock().measure { closedAnswer = try Self.dryRun(deployment, "acme", "localhost", hash: Self.hashes[0], as: "alice") }
        let closed = Self.summary(closedAnswer?.document)
        // A refused connection fails at once; the editor is answered only after the whole check timeout (1 s here),
        // as for a port that never answers, so that the timing does not tell them apart either.
        #expect(waited >= .milliseconds(950), "answered after \(waited)")
        #expect(open.replacingOccurrences(of: "127.0.0.1:\(listener.port)", with: "HOST")
                == closed.replacingOccurrences(of: "localhost:\(closedPort)", with: "HOST"), "\(open) / \(closed)")
        #expect(open.contains("Could not fetch a validated certificate chain from 127.0.0.1:\(listener.port)"), "\(open)")
        for text in [open, closed] {
            #expect(!text.lowercased().contains("refused") && !text.contains("closed the connection") && !text.contains("errno"), "\(text)")
        }
        let operatorOpen = Self.summary(try Self.dryRun(deployment, "acme", "127.0.0.1", hash: Self.hashes[0], as: "olive").document)
        let operatorClosed = Self.summary(try Self.dryRun(deployment, "acme", "localhost", hash: Self.hashes[0], as: "olive").document)
        #expect(operatorOpen.contains("closed the connection before presenting a certificate"), "\(operatorOpen)")
        #expect(operatorClosed.lowercased().contains("refused"), "\(operatorClosed)")
        #expect(listener.accepted == 1, "the operator's reads reused the checks")

        // alice has started 2 of her 6 checks; four more results are checked, the next is refused with Retry-After.
        for hash in Self.hashes[1...4] {
            #expect(try Self.dryRun(deployment, "acme", "127.0.0.1", hash: hash, as: "alice").status == 200)
        }
        #expect(listener.accepted == 5)
        let throttled = try Self.dryRun(deployment, "acme", "127.0.0.1", hash: Self.hashes[5], as: "alice")
        #expect(throttled.status == 429 && Int(throttled.headers["retry-after"] ?? "") ?? 0 > 0, "\(String(describing: throttled.document))")
        #expect(Self.message(throttled.document).contains("6 live-chain checks with this token in the last minute"), "\(Self.message(throttled.document))")
        #expect(listener.accepted == 5, "a refused check connects nowhere")
        // A result checked moments ago is still answered, at no cost; another admin has a budget of their own.
        #expect(try Self.dryRun(deployment, "acme", "127.0.0.1", hash: Self.hashes[4], as: "alice").status == 200)
        #expect(try Self.dryRun(deployment, "acme", "127.0.0.1", hash: Self.hashes[5], as: "olive").status == 200)
        #expect(listener.accepted == 6)
    }
}
