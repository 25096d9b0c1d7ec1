#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// `kill -9` at random points: the server and `pinset sign --out` in the middle of signing passes, the CLI in the
/// middle of an edit. Afterwards SQLite's integrity check passes, every edit is either fully applied or not at
/// all, bundles on disk are whole, and a restarted server serves bundles that OpenSSL verifies.
@Suite(.serialized) struct CrashSafetyTests {
    static let pinHash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
    static let backupHash = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    /// Customers added besides `acme`, so that one signing pass takes a measurable time.
    static let loadCustomers = 800

    @Test func killingTheServerAndSignDuringSigningPasses() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        try addAcme(cli)
        try populateLoadCustomers(cli)

        // One uninterrupted `sign --out`, to place the kills inside its run. Signing 801 bundles takes a while in a
        // debug build on a busy machine: the bounds on it and on the server's startup passes are generous.
        let calibration = cli.directory.file("calibration")
        let started = Date()
        let full = try cli.run(["sign", "--out", calibration], timeout: 600)
        #expect(full.status == 0, "\(full.combined)")
        let passSeconds = max(0.05, Date().timeIntervalSince(started))

        var generator = SystemRandomNumberGenerator()
        // `pinset sign --out`: whatever files exist after a kill are complete, verifiable bundles.
        let out = cli.directory.file("static")
        for round in 0..<2 {
            let signer = try BackgroundProcess(PinsetCLI.binary, ["sign", "--out", out, "--data-dir", cli.dataDir],
                                               logDirectory: cli.directory.path, name: "sign-\(round)")
            usleep(UInt32(Double.random(in: 0.2...1.0, using: &generator) * passSeconds * 1_000_000))
            signer.stop(signal: SIGKILL, timeout: 10)
            try expectIntegrity(cli)
            let written = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".json.signed") }
            for name in ["acme.json.signed", "load-0001.json.signed", "load-\(String(format: "%04d", Self.loadCustomers)).json.signed"]
            where written.contains(name) {
                try expectVerifies(file: "\(out)/\(name)", cli: cli)
            }
            for name in written {
                let size = (try? FileManager.default.attributesOfItem(atPath: "\(out)/\(name)")[.size] as? Int) ?? 0
                #expect(size > 0, "\(name) is empty after a kill")
            }
        }

        // The server, killed during its startup pass (before it listens) and during passes after an edit. The
        // startup pass is timed once: the server prints its listening line right after it.
        let config = try writeServerConfig(cli)
        let calibrationServer = try BackgroundProcess(PinsetCLI.binary, ["serve", "--config", config],
                                                      logDirectory: cli.directory.path, name: "serve-calibration")
        let serverStarted = Date()
        _ = calibrationServer.waitFor(timeout: 600) { RunningServer.listeningPort(in: calibrationServer.stdout) != nil }
        let startupSeconds = max(0.05, Date().timeIntervalSince(serverStarted))
        #expect(calibrationServer.stop(signal: SIGTERM, timeout: 15) == 0)
        var killedBeforeListening = 0
        // The timed pass may have run on a busier machine than the next ones: a kill meant for the startup pass
        // that found the server listening halves the estimate for the next one.
        var startupEstimate = startupSeconds
        for round in 0..<6 {
            let server = try BackgroundProcess(PinsetCLI.binary, ["serve", "--config", config],
                                               logDirectory: cli.directory.path, name: "serve-kill-\(round)")
            if round % 2 == 0 {
                usleep(UInt32(Double.random(in: 0.1...0.7, using: &generator) * startupEstimate * 1_000_000))
                if RunningServer.listeningPort(in: server.stdout) != nil { startupEstimate /= 2 }
            } else {
                _ = server.waitFor(timeout: 600) { RunningServer.listeningPort(in: server.stdout) != nil }
                let hash = Self.randomHashes(1, using: &generator)[0]
                #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", hash]).status == 0)
                // The change is noticed within 0.25 s; the pass then takes about as long as the startup pass.
                usleep(UInt32((0.25 + Double.random(in: 0...1, using: &generator) * startupSeconds) * 1_000_000))
            }
            if RunningServer.listeningPort(in: server.stdout) == nil { killedBeforeListening += 1 }
            server.stop(signal: SIGKILL, timeout: 10)
            try expectIntegrity(cli)
        }
        #expect(killedBeforeListening > 0, "no kill landed in a startup signing pass")

        // Restarted, the server signs and serves every customer again.
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)
        for customer in ["acme", "load-0001", "load-\(String(format: "%04d", Self.loadCustomers))"] {
            let response = try CurlResponse.get("\(server.baseURL)/\(customer).json.signed", in: cli.directory)
            #expect(response.status == 200)
            let file = try cli.directory.write("\(customer)-served.json.signed", response.body)
            let payload = try expectVerifies(file: file, cli: cli)
            #expect(payload["customer"] as? String == customer)
            let version = try sqlite(cli, "SELECT version FROM customer WHERE name = '\(customer)';")
            #expect((payload["version"] as? NSNumber)?.stringValue == version, "served version of \(customer) differs from the database (\(version))")
        }
        #expect(server.stop() == 0)
    }

    @Test func killingTheCLIMidEditNeverHalfAppliesIt() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        try addAcme(cli)
        var generator = SystemRandomNumberGenerator()
        let batchSize = 300

        // One uninterrupted edit, to place the kills across the command's whole run.
        let calibrationBatch = Self.randomHashes(batchSize, using: &generator)
        let started = Date()
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com"] + calibrationBatch.flatMap { ["--hash", $0] }).status == 0)
        let editSeconds = max(0.05, Date().timeIntervalSince(started))
        var expectedPins = Set([Self.pinHash, Self.backupHash] + calibrationBatch)
        var expectedVersion = try Int(sqlite(cli, "SELECT version FROM customer WHERE name = 'acme';")) ?? -1
        var versionConsistent = false  // applied edit: the version went up; absent edit: it did not move
        var expectedAuditEntries = try Int(sqlite(cli, "SELECT count(*) FROM audit_log;")) ?? -1

        var applied = 0, absent = 0
        for round in 0..<12 {
            let batch = Self.randomHashes(batchSize, using: &generator)
            let arguments = ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--data-dir", cli.dataDir, "--actor", "crash-test"]
                + batch.flatMap { ["--hash", $0] }
            let edit = try BackgroundProcess(PinsetCLI.binary, arguments, logDirectory: cli.directory.path, name: "pin-add-\(round)")
            usleep(UInt32(Double.random(in: 0...1.3, using: &generator) * editSeconds * 1_000_000))
            edit.stop(signal: SIGKILL, timeout: 10)
            try expectIntegrity(cli)

            let stored = try storedPins(cli)
            let present = batch.filter(stored.contains).count
            #expect(present == 0 || present == batchSize, "round \(round): \(present) of \(batchSize) pins of one edit were stored")
            let version = try Int(sqlite(cli, "SELECT version FROM customer WHERE name = 'acme';")) ?? -1
            let auditEntries = try Int(sqlite(cli, "SELECT count(*) FROM audit_log;")) ?? -1
            if present == batchSize {
                applied += 1
                expectedPins.formUnion(batch)
                // A change moves the version to at least now in milliseconds, so by one or more.
                versionConsistent = version > expectedVersion
                expectedVersion = version
                expectedAuditEntries += 1
            } else {
                absent += 1
                versionConsistent = version == expectedVersion
            }
            #expect(stored == expectedPins, "round \(round): the stored pins are not the applied edits")
            #expect(versionConsistent, "round \(round): version \(version), last committed \(expectedVersion), edit \(present == batchSize ? "applied" : "absent")")
            #expect(auditEntries == expectedAuditEntries, "round \(round): \(auditEntries) audit entries, expected \(expectedAuditEntries)")
        }
        #expect(applied + absent == 12)

        // The CLI and a restarted server read the database as the edits left it.
        let show = try cli.run(["customer", "show", "acme", "--json"])
        #expect(show.status == 0, "\(show.combined)")
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout)) as? [String: Any])
        let hosts = try #require(shown["hosts"] as? [[String: Any]])
        let shownPins = Set((hosts.first?["pins"] as? [[String: Any]] ?? []).compactMap { $0["pinSHA256"] as? String })
        #expect(shownPins == expectedPins)
        #expect((shown["version"] as? NSNumber)?.intValue == expectedVersion)

        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let response = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
        #expect(response.status == 200)
        let payload = try expectVerifies(file: try cli.directory.write("acme-served.json.signed", response.body), cli: cli)
        let served = (payload["hashes"] as? [[String: Any]])?.first?["pin-sha256"] as? [String] ?? []
        #expect(Set(served) == expectedPins)
        #expect((payload["version"] as? NSNumber)?.intValue == expectedVersion)
        #expect(server.stop() == 0)
    }

    // MARK: - Helpers

    func addAcme(_ cli: PinsetCLI) throws {
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", Self.pinHash, "--hash", Self.backupHash]).status == 0)
    }

    /// Copies `acme`'s host and pins to `loadCustomers` new customers in one transaction, much faster than the CLI.
    func populateLoadCustomers(_ cli: PinsetCLI) throws {
        let sql = """
            BEGIN;
            WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < \(Self.loadCustomers))
            INSERT INTO customer (name, version, created_at, updated_at)
                SELECT printf('load-%04d', n), 1, c.created_at, c.updated_at FROM seq, customer c WHERE c.name = 'acme';
            INSERT INTO host (customer_id, hostname, port, include_subdomains, created_at)
                SELECT target.id, h.hostname, h.port, h.include_subdomains, h.created_at
                FROM customer target, host h JOIN customer origin ON h.customer_id = origin.id AND origin.name = 'acme'
                WHERE target.name LIKE 'load-%';
            INSERT INTO pin (host_id, spki_sha256, spki_der, certificate_sha256, label, source, not_after, created_at)
                SELECT target.id, p.spki_sha256, p.spki_der, p.certificate_sha256, p.label, p.source, p.not_after, p.created_at
                FROM host target JOIN customer tc ON target.customer_id = tc.id AND tc.name LIKE 'load-%',
                     pin p JOIN host h ON p.host_id = h.id JOIN customer origin ON h.customer_id = origin.id AND origin.name = 'acme';
            UPDATE change_counter SET value = value + 1;
            COMMIT;
            """
        let result = try ProcessRunner.run("sqlite3", [cli.database, sql])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try sqlite(cli, "SELECT count(*) FROM customer;") == String(Self.loadCustomers + 1))
    }

    func writeServerConfig(_ cli: PinsetCLI) throws -> String {
        let configuration: [String: Any] = [
            "host": "127.0.0.1", "port": 0, "dataDirectory": cli.dataDir, "changePollIntervalSeconds": 0.25,
        ]
        let path = cli.directory.file("crash-config.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: path))
        return path
    }

    @discardableResult
    func sqlite(_ cli: PinsetCLI, _ sql: String) throws -> String {
        let result = try ProcessRunner.run("sqlite3", [cli.database, sql], timeout: 30)
        guard result.status == 0 else { throw Failure("sqlite3 '\(sql)' failed: \(result.stderr)") }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func expectIntegrity(_ cli: PinsetCLI) throws {
        let check = try sqlite(cli, "PRAGMA integrity_check;")
        #expect(check == "ok", "integrity_check: \(check)")
        let foreignKeys = try sqlite(cli, "PRAGMA foreign_key_check;")
        #expect(foreignKeys.isEmpty, "foreign_key_check: \(foreignKeys)")
    }

    /// The base64 SPKI hashes stored for acme's host.
    func storedPins(_ cli: PinsetCLI) throws -> Set<String> {
        let hex = try sqlite(cli, """
            SELECT hex(p.spki_sha256) FROM pin p JOIN host h ON p.host_id = h.id JOIN customer c ON h.customer_id = c.id
            WHERE c.name = 'acme' AND h.hostname = 'api.example.com';
            """)
        return Set(hex.split(separator: "\n").map { line in
            var bytes: [UInt8] = []
            var index = line.startIndex
            while index < line.endIndex, let next = line.index(index, offsetBy: 2, limitedBy: line.endIndex) {
                bytes.append(UInt8(line[index..<next], radix: 16) ?? 0)
                index = next
            }
            return Data(bytes).base64EncodedString()
        })
    }

    /// `openssl smime -verify` against the trust certificate; returns the verified JSON payload.
    @discardableResult
    func expectVerifies(file: String, cli: PinsetCLI) throws -> [String: Any] {
        let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", file, "-CAfile", cli.trustCertificate])
        #expect(verified.status == 0, "openssl smime -verify \(file): \(verified.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any]) ?? [:]
    }

    static func randomHashes(_ count: Int, using generator: inout SystemRandomNumberGenerator) -> [String] {
        (0..<count).map { _ in Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString() }
    }
}
