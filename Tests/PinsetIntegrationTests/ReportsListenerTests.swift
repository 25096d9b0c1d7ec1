import Foundation
import PinsetTestSupport
import Testing

/// The pin-failure reports listener of a real `pinset serve`: TrustKit-shaped reports counted per installation
/// and hour, `pinset reports` and `pinset status` reading them, and hostile input refused without a trace.
@Suite(.serialized) struct ReportsListenerTests {
    /// A server with customer `acme` (api.example.com pinned to a fresh leaf) and a reports listener.
    struct Setup {
        let cli: PinsetCLI
        let server: RunningServer
        let reportsPort: Int
        /// PEM of the pinned leaf, and of a leaf with a key no pin holds.
        let pinnedLeafPEM: String
        let unpinnedLeafPEM: String

        init(reports: [String: Any] = [:]) throws {
            cli = try PinsetCLI.initialized()
            let pinned = try cli.addAcmePinnedToLeafAndBackup()
            let unpinned = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "unpinned")
            pinnedLeafPEM = try String(contentsOfFile: pinned.cert, encoding: .utf8)
            unpinnedLeafPEM = try String(contentsOfFile: unpinned.cert, encoding: .utf8)
            var settings: [String: Any] = ["host": "127.0.0.1", "port": 0, "flushIntervalSeconds": 0.1]
            settings.merge(reports) { _, new in new }
            let started = try RunningServer(cli: cli, extraConfiguration: ["reports": settings])
            do {
                reportsPort = try ReportsListenerTests.waitForReportsPort(of: started)
            } catch {
                started.stop()
                throw error
            }
            server = started
        }

        func stop() {
            server.stop()
            cli.remove()
        }

        /// `pinset reports --json` rows, polled until `done` holds or 10 s pass.
        func reportRows(_ arguments: [String] = [], until done: ([[String: Any]]) -> Bool) async throws -> [[String: Any]] {
            var rows: [[String: Any]] = []
            for attempt in 0..<100 {
                if attempt > 0 { try await Task.sleep(for: .milliseconds(100)) }
                let result = try cli.run(["reports", "--data-dir", cli.dataDir, "--json"] + arguments)
                rows = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]] ?? []
                if done(rows) { break }
            }
            return rows
        }
    }

    /// The reports listener's port, from the server's "listening" line, waiting up to 60 s for it.
    static func waitForReportsPort(of server: RunningServer) throws -> Int {
        var found: Int?
        _ = server.process.waitFor(timeout: 60) {
            found = reportsPort(in: server.process.stdout)
            return found != nil
        }
        guard let found else { throw Failure("no reports listening line: \(server.process.stdout)") }
        return found
    }

    static func reportsPort(in output: String) -> Int? {
        for line in output.split(separator: "\n") where line.hasPrefix("pinset reports listening on ") {
            return line.split(separator: ":").last.flatMap { Int($0) }
        }
        return nil
    }

    /// POSTs `body` on its own connection and returns the response status (0 when there was no response).
    /// `proxiedFrom` sends a PROXY protocol v1 header first, as a load balancer does for that client address
    /// (`TCP6` for an address with a colon).
    static func post(_ body: [UInt8], port: Int, path: String = "/report/acme", contentType: String? = "application/json",
                     extraHeaders: String = "", proxiedFrom client: String? = nil) throws -> Int {
        var head = client.map { $0.contains(":") ? "PROXY TCP6 \($0) ::1 50000 \(port)\r\n" : "PROXY TCP4 \($0) 127.0.0.1 50000 \(port)\r\n" } ?? ""
        head += "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        let (response, _) = try RawClient.exchange(port: port, Array((head + extraHeaders + "\r\n").utf8) + body)
        return status(of: response)
    }

    static func status(of response: [UInt8]) -> Int {
        let line = String(decoding: response.prefix(32), as: UTF8.self)
        let parts = line.split(separator: " ")
        return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    }

    @Test func trustKitReportsAreCountedOncePerInstallationAndShownByReportsAndStatus() async throws {
        let setup = try Setup()
        defer { setup.stop() }
        let port = setup.reportsPort
        let failing = { (vendor: String, version: String) in
            TrustKitReportFixture.json(leafPEM: setup.unpinnedLeafPEM, vendorID: vendor, appVersion: version)
        }
        // One installation retrying three times counts once; a second installation and a new app version count.
        for _ in 0..<3 { #expect(try Self.post(failing("install-1", "2.4.1"), port: port) == 202) }
        #expect(try Self.post(failing("install-2", "2.4.1"), port: port) == 202)
        #expect(try Self.post(failing("install-1", "2.5.0"), port: port) == 202)
        // A report whose served key is pinned now (the app held an older pin set).
        let pinsetReport = TrustKitReportFixture.json(leafPEM: setup.pinnedLeafPEM, vendorID: "install-3", overrides: ["pinset-version": 3])
        #expect(try Self.post(pinsetReport, port: port) == 202)

        let rows = try await setup.reportRows { rows in rows.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) } >= 4 }
        #expect(rows.count == 2)
        let unpinned = try #require(rows.first { $0["servedKeyPinned"] as? Bool == false })
        #expect(unpinned["reports"] as? Int == 3)
        #expect(unpinned["hostname"] as? String == "api.example.com")
        #expect(unpinned["result"] as? String == "no-matching-pin")
        #expect(unpinned["appVersions"] as? [String] == ["2.4.1", "2.5.0"])
        #expect(unpinned["pinsetVersions"] as? [Int] == [])
        let pinned = try #require(rows.first { $0["servedKeyPinned"] as? Bool == true })
        #expect(pinned["reports"] as? Int == 1)
        #expect(pinned["pinsetVersions"] as? [Int] == [3])

        let table = try setup.cli.run(["reports", "acme", "--since", "2h", "--data-dir", setup.cli.dataDir])
        #expect(table.status == 0)
        #expect(table.stdoutText.contains("KEY PINNED"))
        #expect(table.stdoutText.split(separator: "\n").contains { $0.contains("api.example.com") && $0.contains("no-matching-pin") && $0.hasSuffix("NO") }, "\(table.stdoutText)")

        let status = try setup.cli.run(["status", "--url", setup.server.baseURL])
        #expect(status.stdoutText.contains("pin-failure reports: on; last hour: acme 4"), "\(status.stdoutText)")
        let metrics = try CurlResponse.get("\(setup.server.baseURL)/metrics", in: setup.cli.directory)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"pinset_reports_received_total{outcome="accepted"} 4"#))
        #expect(text.contains(#"pinset_reports_received_total{outcome="duplicate"} 2"#))
        // No client address and no installation identifier is stored.
        let dump = try setup.cli.databaseDump()
        #expect(!dump.contains("install-1") && !dump.contains("127.0.0.1"))
    }

    @Test func badSinceIsRefusedWithAnExample() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        for since in ["24", "0h", "-1d", "1w", "h", "99999999999999999999d"] {
            let result = try cli.run(["reports", "--since=\(since)", "--data-dir", cli.dataDir])
            #expect(result.status != 0)
            #expect(result.stderr.contains("is not a duration. Give a positive number followed by m, h or d, such as 90m, 24h or 7d"), "\(since): \(result.combined)")
        }
        let unknown = try cli.run(["reports", "nobody", "--data-dir", cli.dataDir])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("There is no customer 'nobody'"))
    }

    @Test func hostileReportsAreRefusedAndChangeNothing() async throws {
        let setup = try Setup(reports: ["maxBodyBytes": 4096])
        defer { setup.stop() }
        let port = setup.reportsPort
        let valid = TrustKitReportFixture.json(leafPEM: setup.unpinnedLeafPEM)
        let before = try setup.cli.databaseDump()
        var invalidUTF8 = valid
        invalidUTF8[valid.firstIndex(of: UInt8(ascii: "2"))!] = 0xC0
        let deep = Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8)
        let cases: [(String, () throws -> Int, Int)] = [
            ("oversized", { try Self.post(valid + [UInt8](repeating: 0x20, count: 5000), port: port) }, 413),
            ("text/plain", { try Self.post(valid, port: port, contentType: "text/plain") }, 415),
            ("no content type", { try Self.post(valid, port: port, contentType: nil) }, 415),
            ("deep JSON", { try Self.post(deep, port: port, extraHeaders: "") }, 413),
            ("deep JSON within the size", { try Self.post(Array(deep.prefix(1000) + deep.suffix(1000)), port: port) }, 400),
            ("invalid UTF-8", { try Self.post(invalidUTF8, port: port) }, 400),
            ("schema", { try Self.post(TrustKitReportFixture.json(leafPEM: setup.unpinnedLeafPEM, overrides: ["port": "443"]), port: port) }, 400),
            ("unknown member of the wrong size", { try Self.post(TrustKitReportFixture.json(leafPEM: setup.unpinnedLeafPEM, overrides: ["client-ip": String(repeating: "1", count: 5000)]), port: port) }, 413),
            ("duplicate member", { try Self.post(Array(String(decoding: valid, as: UTF8.self).replacingOccurrences(of: "{", with: #"{"port":443,"#).utf8), port: port) }, 400),
            ("unknown customer", { try Self.post(valid, port: port, path: "/report/globex") }, 404),
            ("chunked with malformed framing", {
                let request = "POST /report/acme HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\n0\r\n\r\n"
                return Self.status(of: try RawClient.exchange(port: port, Array(request.utf8)).response)
            }, 400),
            ("GET", {
                Self.status(of: try RawClient.exchange(port: port, Array("GET /report/acme HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".utf8)).response)
            }, 405),
        ]
        for (name, send, expected) in cases {
            #expect(try send() == expected, "\(name)")
        }
        // The bundle listener still refuses content and POST.
        #expect(try Self.post(valid, port: setup.server.port) == 400)
        // Give the writer several flush intervals to store anything it (wrongly) accepted.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try setup.cli.databaseDump() == before)
        let metrics = try CurlResponse.get("\(setup.server.baseURL)/metrics", in: setup.cli.directory)
        #expect(!String(decoding: metrics.body, as: UTF8.self).contains(#"pinset_reports_received_total{outcome="accepted"} 1"#))
    }

    @Test func aFloodFromOneAddressIsRateLimitedWhileBundlesKeepBeingServed() async throws {
        let setup = try Setup(reports: ["reportsPerMinutePerAddress": 20])
        defer { setup.stop() }
        let reportsPort = setup.reportsPort
        let bundlePort = setup.server.port
        let leafPEM = setup.unpinnedLeafPEM
        let bundleLoop = Task.detached {
            (0..<100).map { _ in
                let request = Array("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".utf8)
                return (try? RawClient.exchange(port: bundlePort, request)).map { Self.status(of: $0.response) } ?? 0
            }
        }
        let startedMinute = Self.currentMinute()
        let flood = Task.detached {
            (0..<300).map { index in
                let body = TrustKitReportFixture.json(leafPEM: leafPEM, vendorID: "install-\(index)")
                return (try? Self.post(body, port: reportsPort)) ?? 0
            }
        }
        let reportStatuses = await flood.value
        let minutes = Self.minutesSpanned(since: startedMinute)
        let bundles = await bundleLoop.value
        #expect(bundles.allSatisfy { $0 == 200 }, "bundle statuses: \(Set(bundles))")
        let accepted = reportStatuses.filter { $0 == 202 }.count
        let limited = reportStatuses.filter { $0 == 429 }.count
        // 20 per minute of the clock: each minute the flood reached allows another quota.
        #expect((20...20 * minutes).contains(accepted), "accepted \(accepted) in \(minutes) minutes")
        #expect(accepted + limited == 300)
        let rows = try await setup.reportRows { rows in rows.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) } >= accepted }
        #expect(rows.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) } == accepted)
    }

    /// Behind a load balancer that sends the PROXY protocol, the per-address limit applies to each app's address.
    @Test func behindALoadBalancerTheLimitAppliesToEachAppsAddress() throws {
        let setup = try Setup(reports: ["reportsPerMinutePerAddress": 1, "proxyProtocol": true])
        defer { setup.stop() }
        // The quota is per minute of the clock: all of these must fall in one.
        Self.waitForAFreshMinute()
        func report(_ index: Int, from client: String?) throws -> Int {
            try Self.post(TrustKitReportFixture.json(leafPEM: setup.unpinnedLeafPEM, vendorID: "install-\(index)"), port: setup.reportsPort, proxiedFrom: client)
        }
        #expect(try report(1, from: "203.0.113.7") == 202)
        #expect(try report(2, from: "203.0.113.7") == 429)
        #expect(try report(3, from: "203.0.113.8") == 202)
        // The same IPv4 client reached through a dual-stack balancer arrives as TCP6 with an IPv4-mapped address
        // (RFC 4291 §2.5.5.2): it is the same address, so the same quota.
        #expect(try report(5, from: "::ffff:203.0.113.8") == 429)
        #expect(try report(6, from: "::FFFF:CB00:7107") == 429)
        #expect(try report(7, from: "2001:db8::8") == 202)
        // Without the header the connection is closed unanswered.
        #expect(try report(4, from: nil) == 0)
    }

    /// 10,000 reports from one address as fast as four connections at a time can send them: every one is
    /// answered (accepted within the quota, 429 after it), bundles keep being served, and the server's memory
    /// stays bounded.
    @Test func tenThousandReportsFromOneAddressAreAnsweredWithBoundedMemory() async throws {
        let setup = try Setup()
        defer { setup.stop() }
        let reportsPort = setup.reportsPort
        let bundlePort = setup.server.port
        let leafPEM = setup.unpinnedLeafPEM
        let pid = setup.server.process.pid
        func residentKiB() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        // Warm up allocations the first reports make, then measure from there.
        _ = try Self.post(TrustKitReportFixture.json(leafPEM: leafPEM, vendorID: "warm-up"), port: reportsPort)
        let before = residentKiB()

        let bundleLoop = Task.detached {
            (0..<200).map { _ in
                let request = Array("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".utf8)
                return (try? RawClient.exchange(port: bundlePort, request)).map { Self.status(of: $0.response) } ?? 0
            }
        }
        let startedMinute = Self.currentMinute()
        let senders = (0..<4).map { sender in
            Task.detached {
                (0..<2_500).map { index in
                    let body = TrustKitReportFixture.json(leafPEM: leafPEM, vendorID: "install-\(sender)-\(index)")
                    return (try? Self.post(body, port: reportsPort)) ?? 0
                }
            }
        }
        var statuses: [Int] = []
        for sender in senders { statuses += await sender.value }
        let minutes = Self.minutesSpanned(since: startedMinute)
        let bundles = await bundleLoop.value
        let after = residentKiB()

        #expect(statuses.count == 10_000)
        #expect(Set(statuses).isSubset(of: [202, 429]), "statuses: \(Set(statuses))")
        #expect(statuses.filter { $0 == 202 }.count <= minutes * 60, "more accepted than the per-address quota allows in \(minutes) minutes")
        #expect(bundles.allSatisfy { $0 == 200 }, "bundle statuses: \(Set(bundles))")
        #expect(after - before < 64 * 1024, "resident memory grew from \(before) KiB to \(after) KiB")
    }

    /// The minute of the clock the report quotas count in (`ReportRateLimiter`).
    static func currentMinute() -> Int { Int(Date().timeIntervalSince1970) / 60 }

    /// How many minutes of the clock a run that began in `minute` has reached, counting both ends.
    static func minutesSpanned(since minute: Int) -> Int { currentMinute() - minute + 1 }

    /// Returns at once early in a minute; late in one, waits for the next, so that a short run stays inside one.
    static func waitForAFreshMinute() {
        let second = Int(Date().timeIntervalSince1970) % 60
        if second >= 30 { Thread.sleep(forTimeInterval: Double(61 - second)) }
    }
}
