#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// A host name whose DNS answers change between lookups (DNS rebinding) cannot lead the server's live-chain check
/// past its address policy: the name is resolved once, and the connection goes to the address that was judged.
/// The server runs in a mount namespace whose /etc/resolv.conf names a DNS responder on loopback that the test
/// controls; everything stays on 127.0.0.0/8.
@Suite(.serialized) struct DNSRebindingTests {
    /// Answers A queries for NAME: the first with FIRST, every later one with LATER; AAAA and other names get no
    /// address. Each A query is logged as a line, so the test counts lookups.
    static let responder = """
        import socket, sys
        name, first, later, log_path, address = sys.argv[1].encode(), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((address, 53))
        print("listening", flush=True)
        answered = 0
        while True:
            query, peer = sock.recvfrom(512)
            labels, offset = [], 12
            while query[offset] != 0:
                length = query[offset]
                labels.append(query[offset + 1:offset + 1 + length])
                offset += 1 + length
            qtype = int.from_bytes(query[offset + 1:offset + 3], "big")
            question = query[12:offset + 5]
            asked = b".".join(labels).lower()
            answers = b""
            count = 0
            if asked == name and qtype == 1:
                ip = first if answered == 0 else later
                answered += 1
                with open(log_path, "a") as log:
                    log.write("A %s -> %s\\n" % (asked.decode(), ip))
                answers = b"\\xc0\\x0c\\x00\\x01\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x04" + socket.inet_aton(ip)
                count = 1
            rcode = 0 if asked == name else 3
            header = query[:2] + bytes([0x81, 0x80 | rcode]) + b"\\x00\\x01" + count.to_bytes(2, "big") + b"\\x00\\x00\\x00\\x00"
            sock.sendto(header + question + answers, peer)
        """

    /// Whether this machine lets the test give the server a resolv.conf of its own (root, or a user namespace).
    static let canUseMountNamespaces: Bool = (try? ProcessRunner.run("unshare", ["--mount", "true"]).status == 0) ?? false

    @Test(.enabled(if: canUseMountNamespaces, "needs 'unshare --mount' to give the server its own /etc/resolv.conf"))
    func aNameThatAnswersDifferentlyTheSecondTimeIsReachedWhereItWasJudged() throws {
        let listener = try ConnectionCountingListener(hold: 0.2)
        defer { listener.stop() }
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        for arguments in [["customer", "add", "acme"], ["admin", "add", "alice", "--role", "operator"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 0, "\(result.combined)")
        }
        let token = try cli.run(["admin", "token", "alice", "--label", "rebinding-test"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let directory = cli.directory
        let dnsAddress = "127.0.53.\(Int.random(in: 2...250))"
        let log = directory.file("dns-queries.log")
        let script = try directory.write("responder.py", Self.responder)
        // Answers 127.0.0.1 (allowed) first, then 127.0.0.2 (not allowed), where nothing listens.
        let dns = try BackgroundProcess("python3", [script, "rebind.example.test", "127.0.0.1", "127.0.0.2", log, dnsAddress],
                                        logDirectory: directory.path, name: "dns")
        defer { dns.stop() }
        #expect(dns.waitFor(timeout: 30) { dns.stdout.contains("listening") }, "the DNS responder did not start: \(dns.stderr)")
        let resolvConf = try directory.write("resolv.conf", "nameserver \(dnsAddress)\noptions attempts:1 timeout:2\n")

        let apiPort = try FreePort.pick()
        let configuration: [String: Any] = [
            "host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir, "api": ["host": "127.0.0.1", "port": apiPort],
            "monitoring": ["intervalSeconds": 600, "allowedAddresses": ["127.0.0.1/32"]],
        ]
        let configPath = directory.file("config-rebinding.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        // unshare runs the shell in a mount namespace of its own: the bind mount is seen by the server alone.
        let server = try BackgroundProcess("unshare", [
            "--mount", "sh", "-c", "mount --bind \"$0\" /etc/resolv.conf && exec \"$1\" serve --config \"$2\"", resolvConf, PinsetCLI.binary, configPath,
        ], logDirectory: directory.path, name: "serve-rebinding", environment: cli.environment)
        defer { server.stop(signal: SIGTERM, timeout: 15) }
        #expect(server.waitFor(timeout: 60) { RunningServer.listeningPort(in: server.stdout) != nil }, "\(server.stdout)\n\(server.stderr)")

        func call(_ path: String, _ body: String) throws -> CurlResponse {
            let file = directory.file("body-\(UUID().uuidString.prefix(8)).json")
            try Data(body.utf8).write(to: URL(fileURLWithPath: file))
            return try CurlResponse.get("http://127.0.0.1:\(apiPort)\(path)", [
                "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json", "--data-binary", "@\(file)",
            ], in: directory)
        }
        #expect(try call("/api/v1/customers/acme/hosts", "{\"hostname\": \"rebind.example.test\", \"port\": \(listener.port)}").status == 201)
        let dryRun = try call("/api/v1/customers/acme/hosts/rebind.example.test/pins",
                              "{\"hashes\": [\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"], \"dryRun\": true}")
        let queries = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(dryRun.status == 200, "\(String(decoding: dryRun.body, as: UTF8.self))")
        #expect(queries == ["A rebind.example.test -> 127.0.0.1"], "one lookup, judged and used: \(queries)")
        #expect(listener.accepted == 1, "the connection went to the address that was judged, not to a second answer")

        // The next result is judged afresh: the name now leads to 127.0.0.2, which is refused before any connection
        // (alice is an operator, so the refusal names the address).
        let refused = try call("/api/v1/customers/acme/hosts/rebind.example.test/pins",
                               "{\"hashes\": [\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"], \"dryRun\": true}")
        #expect(refused.status == 409 && String(decoding: refused.body, as: UTF8.self).contains("127.0.0.2, a loopback"),
                "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(listener.accepted == 1)
    }
}
