#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// The admin listener under an attacker who holds every connection slot it is allowed: an admin's call from another
/// address still gets through, every time; a body announced above the limit is refused before it is read.
@Suite(.serialized) struct AdminListenerFloodTests {
    static let floodSources = (1...8).map { "127.0.1.\($0)" }
    /// One /64, eight of its addresses.
    static let floodIPv6Sources = (1...8).map { "2001:db8:1:2::1\($0)" }
    static let calls = 50

    /// 8 connections from each of 127.0.1.1–8 (64, the listener's whole capacity under the old per-address
    /// counting), every one reopened the moment the server closes it; meanwhile alice calls `GET /api/v1/me` from
    /// 127.0.0.1 with her token, 50 times, each through a new connection.
    @Test(arguments: ConnectionFlood.Mode.allCases)
    func anAdminGetsThroughWhileEightAddressesHoldEverySlot(_ mode: ConnectionFlood.Mode) async throws {
        let deployment = try AdminAPITests.deploy(.sqlite)
        defer { deployment.stop() }
        let flood = ConnectionFlood(port: deployment.apiPort, sources: Self.floodSources, perSource: 8, mode: mode)
        flood.start()
        defer { flood.stop() }
        let holding = try await eventually(within: 30) { flood.open >= 60 }
        #expect(flood.error == nil)
        try #require(holding, "the flood never held its connections open: \(flood.open) open")

        let failures = Self.callRepeatedly {
            try deployment.call("GET", "/api/v1/me", as: "alice", from: "127.0.0.1").status
        }
        #expect(failures.isEmpty, "\(failures.count) of \(Self.calls) admin calls failed during the \(mode) flood: \(failures.prefix(5))")
        // The flood was at the listener's capacity: slots were taken back from it, for the admin and for its own
        // newer connections.
        #expect(flood.reopened > 0)
    }

    /// `Content-Length: 10^9` is answered 413 before a byte of the body is sent, and the connection closed, with
    /// a valid token and without one; nothing is stored.
    @Test func aBodyAnnouncedAboveTheLimitIsRefusedAtOnce() throws {
        let deployment = try AdminAPITests.deploy(.sqlite)
        defer { deployment.stop() }
        let before = try deployment.databaseState()
        for token in [deployment.tokens["alice"], nil] {
            let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
            let head = "POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\n\(authorization)Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"
            // The server's request deadline is 30 s: an answer and a close within 10 s come from the announced length.
            let (response, closed) = try RawClient.exchange(port: deployment.apiPort, Array(head.utf8), timeout: 10)
            let text = String(decoding: response, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 413"), "\(text)")
            #expect(text.contains("larger than 262144 bytes"), "\(text)")
            #expect(text.lowercased().contains("connection: close"), "\(text)")
            #expect(closed, "the connection stayed open after the 413")
        }
        #expect(try deployment.databaseState() == before)
        // The listener is not worse for it.
        #expect(try deployment.call("GET", "/api/v1/me", as: "alice").status == 200)
    }

    /// Eight addresses of one IPv6 /64, 8 connections each, in a network namespace of the test's own (the server
    /// in it, its admin API on ::1): they count as one client and hold 8 slots together, so an admin's call from
    /// ::1 gets through, every time.
    @Test(.enabled(if: NetworkNamespace.canCreate, "needs root and 'ip netns' to make a network namespace with an IPv6 /64 on its loopback"))
    func anIPv6Slash64CountsAsOneClient() async throws {
        let namespace = try NetworkNamespace(addresses: Self.floodIPv6Sources)
        defer { namespace.remove() }
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        for arguments in [["customer", "add", "acme"], ["admin", "add", "alice", "--role", "viewer:acme"]] {
            let result = try cli.run(arguments)
            try #require(result.status == 0, "pinset \(arguments.joined(separator: " ")): \(result.combined)")
        }
        let made = try cli.run(["admin", "token", "alice", "--label", "flood-test"])
        try #require(made.status == 0, "\(made.combined)")
        let token = made.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        // A fresh namespace: every port is free in it.
        let apiPort = 9443
        let configuration: [String: Any] = [
            "host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir, "changePollIntervalSeconds": 0.25,
            "api": ["host": "::1", "port": apiPort],
        ]
        let configPath = cli.directory.file("config-ipv6.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        let server = try BackgroundProcess("ip", ["netns", "exec", namespace.name, PinsetCLI.binary, "serve", "--config", configPath],
                                           logDirectory: cli.directory.path, name: "serve-ipv6", environment: cli.environment)
        defer { server.stop() }
        func adminCall() throws -> Int {
            let result = try ProcessRunner.run("ip", ["netns", "exec", namespace.name, "curl", "-g", "-sS", "--max-time", "10", "-o", "/dev/null",
                                                      "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)", "http://[::1]:\(apiPort)/api/v1/me"])
            guard result.status == 0 else { throw Failure("curl in \(namespace.name): \(result.stderr)") }
            return Int(result.stdoutText) ?? 0
        }
        let up = server.waitFor(timeout: 60) { (try? adminCall()) == 200 }
        try #require(up, "the server in \(namespace.name) did not answer: \(server.stdout)\(server.stderr)")

        let flood = ConnectionFlood(port: apiPort, destination: "::1", sources: Self.floodIPv6Sources, perSource: 8, mode: .idle, namespace: namespace.name)
        flood.start()
        defer { flood.stop() }
        let holding = try await eventually(within: 30) { flood.open >= 60 || flood.error != nil }
        #expect(flood.error == nil)
        try #require(holding, "the flood never held its connections open: \(flood.open) open")

        let failures = Self.callRepeatedly(adminCall)
        #expect(failures.isEmpty, "\(failures.count) of \(Self.calls) admin calls failed during the IPv6 flood: \(failures.prefix(5))")
        // The /64 was held to its 8: its own newer connections pushed out its older ones.
        #expect(flood.reopened > 0)
    }

    /// Makes `calls` calls; returns what went wrong with those that did not answer 200.
    static func callRepeatedly(_ call: () throws -> Int) -> [String] {
        var failures: [String] = []
        for index in 0..<calls {
            do {
                let status = try call()
                if status != 200 { failures.append("call \(index): \(status)") }
            } catch {
                failures.append("call \(index): \(error)")
            }
        }
        return failures
    }
}

/// A network namespace of the test's own, with its loopback up and the given IPv6 addresses on it; the host's
/// own network configuration is not touched.
struct NetworkNamespace {
    let name: String

    /// Whether this machine lets the test make one (root, `ip netns`).
    static let canCreate: Bool = {
        guard getuid() == 0 else { return false }
        let probe = "pinset-probe-\(getpid())"
        guard (try? ProcessRunner.run("ip", ["netns", "add", probe]).status) == 0 else { return false }
        _ = try? ProcessRunner.run("ip", ["netns", "del", probe])
        return true
    }()

    init(addresses: [String]) throws {
        name = "pinset-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let added = try ProcessRunner.run("ip", ["netns", "add", name])
        guard added.status == 0 else { throw Failure("ip netns add \(name): \(added.stderr)") }
        var commands = [["-n", name, "link", "set", "lo", "up"]]
        // nodad: usable at once, without duplicate address detection's wait.
        commands += addresses.map { ["-n", name, "-6", "addr", "add", "\($0)/64", "dev", "lo", "nodad"] }
        for arguments in commands {
            let result = try ProcessRunner.run("ip", arguments)
            guard result.status == 0 else {
                remove()
                throw Failure("ip \(arguments.joined(separator: " ")): \(result.stderr)")
            }
        }
    }

    func remove() {
        _ = try? ProcessRunner.run("ip", ["netns", "del", name])
    }
}
