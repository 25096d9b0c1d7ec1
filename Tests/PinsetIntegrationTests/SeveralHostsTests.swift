#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// Three `pinset serve` instances, as on three hosts: each with a data directory of its own holding a copy of
/// the key, sharing nothing but a real PostgreSQL database, behind a real nginx.
@Suite(.serialized) struct SeveralHostsTests {
    struct Deployment {
        let postgres: TestPostgresServer
        let cli: PinsetCLI
        let instanceDirectories: [String]
        let anchorDER: [UInt8]

        /// `pinset init` against the database, then one data directory per instance with a copy of the key.
        init(instances: Int = 3) throws {
            let postgres = try TestPostgresServer()
            self.postgres = postgres
            let cli = try PinsetCLI.initialized(databaseURL: postgres.url, environment: postgres.environment)
            for command in [
                ["customer", "add", "acme"], ["host", "add", "acme", "api.example.com"],
                ["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", ServeEndToEndTests.hashPin],
            ] {
                let result = try cli.run(command)
                guard result.status == 0 else { throw Failure("pinset \(command.joined(separator: " ")): \(result.combined)") }
            }
            self.cli = cli
            instanceDirectories = try (0..<instances).map { index in
                let directory = cli.directory.file("host-\(index + 1)")
                guard mkdir(directory, 0o700) == 0 else { throw Failure("mkdir \(directory) failed") }
                for file in ["signing-key.pem", "trust-cert.pem", "trust-cert.der"] {
                    try FileManager.default.copyItem(atPath: "\(cli.dataDir)/\(file)", toPath: "\(directory)/\(file)")
                }
                return directory
            }
            anchorDER = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/trust-cert.der")))
        }

        func start(_ index: Int, extraConfiguration: [String: Any] = [:]) throws -> RunningServer {
            try RunningServer(cli: cli, extraConfiguration: extraConfiguration.merging(["dataDirectory": instanceDirectories[index]]) { _, new in new })
        }

        func clientConfiguration(serverURL: String) throws -> PinsetClientConfiguration {
            try PinsetClientConfiguration(
                serverURL: try #require(URL(string: serverURL)), customer: try CustomerName("acme"),
                trustCertificates: [anchorDER], stateDirectory: cli.directory.file("client-\(UUID().uuidString.prefix(6))")
            )
        }

        /// The bundle `baseURL` serves, verified as a Pinset client verifies it.
        func served(by baseURL: String) async throws -> VerifiedPinSet {
            let response = try CurlResponse.get("\(baseURL)/acme.json.signed", in: cli.directory)
            guard response.status == 200 else { throw Failure("\(baseURL) answered \(response.status)") }
            return try await BundleVerifier.verify(
                response.body, configuration: try clientConfiguration(serverURL: baseURL), lastAccepted: nil, source: .download, at: Date()
            ).get()
        }

        func remove() {
            cli.remove()
        }
    }

    /// Fetches through the load balancer in a loop until stopped, verifying every bundle with `openssl smime`
    /// as a legacy client does; records every failure.
    final class FetchLoop: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        private(set) var fetches = 0
        private(set) var failures: [String] = []
        private(set) var newestTimestamp: Int64 = 0
        private let done = DispatchSemaphore(value: 0)

        init(url: String, client: LegacyGCXClient, directory: TemporaryDirectory) {
            Thread.detachNewThread { [self] in
                // Bounded: at most 10 minutes of fetches.
                for _ in 0..<6_000 where !lock.withLock({ stopped }) {
                    do {
                        let response = try CurlResponse.get(url, in: directory)
                        if response.status != 200 { throw Failure("status \(response.status)") }
                        let payload = try client.accept(bundle: response.body)
                        lock.withLock {
                            fetches += 1
                            newestTimestamp = max(newestTimestamp, payload.timestamp)
                        }
                    } catch {
                        lock.withLock { failures.append("\(Date()): \(error)") }
                    }
                    usleep(100_000)
                }
                done.signal()
            }
        }

        func stop() -> (fetches: Int, failures: [String]) {
            lock.withLock { stopped = true }
            done.wait()
            return lock.withLock { (fetches, failures) }
        }

        var newest: Int64 { lock.withLock { newestTimestamp } }
        var fetchCount: Int { lock.withLock { fetches } }
    }

    /// Polls each server until it serves a version above `version`; returns how long that took for the slowest.
    /// The bound is generous: it only keeps an edit that never arrives from holding the test.
    func waitUntilAllServe(above version: Int64, _ deployment: Deployment, _ servers: [RunningServer]) async throws -> Duration {
        let started = ContinuousClock.now
        let deadline = started + .seconds(120)
        for server in servers {
            var served: Int64 = 0
            while served <= version && ContinuousClock.now < deadline {
                served = (try? await deployment.served(by: server.baseURL).version) ?? 0
                if served <= version { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(served > version, "\(server.baseURL) still serves \(served)")
        }
        return ContinuousClock.now - started
    }

    @Test func anEditOnOneHostIsServedByAllAndAnInstanceOrADatabaseOutageLosesNoFetch() async throws {
        let deployment = try Deployment()
        defer { deployment.remove() }
        let cli = deployment.cli
        // Re-signing every 2 s makes the outage visible: bundles must keep getting newer without the database.
        var servers = try (0..<3).map { try deployment.start($0, extraConfiguration: ["resignIntervalSeconds": 2]) }
        defer { for server in servers { server.stop() } }
        let nginx = try NginxLoadBalancer(upstreamPorts: servers.map(\.port), in: cli.directory, caching: false)
        defer { nginx.stop() }

        let before = try await deployment.served(by: servers[0].baseURL).version
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        _ = try await waitUntilAllServe(above: before, deployment, servers)

        let legacy = try LegacyGCXClient(anchorDER: deployment.anchorDER, directory: cli.directory.path)
        let loop = FetchLoop(url: "\(nginx.baseURL)/acme.json.signed", client: legacy, directory: cli.directory)

        // One instance goes away: nginx sends its share to the others.
        try await Task.sleep(for: .seconds(1))
        #expect(servers[1].stop() == 0)

        // The database goes away for 12 s, six re-signing intervals: the instances keep serving and re-signing what they
        // loaded.
        try deployment.postgres.stop()
        let outageStarted = Int64(Date().timeIntervalSince1970)
        let outageClock = ContinuousClock.now
        let fetchesBeforeOutage = loop.fetchCount
        // Each instance notices at its next poll of the store; on a loaded machine that may take a while.
        var readiness = try CurlResponse.get("\(servers[0].baseURL)/readyz", in: cli.directory)
        _ = try await eventually(within: 60) {
            readiness = try CurlResponse.get("\(servers[0].baseURL)/readyz", in: cli.directory)
            return String(decoding: readiness.body, as: UTF8.self).contains("store unavailable since")
        }
        #expect(readiness.status == 200)
        #expect(String(decoding: readiness.body, as: UTF8.self).contains("store unavailable since"))
        var store: [String: Any] = [:]
        _ = try await eventually(within: 60) {
            let status = try CurlResponse.get("\(servers[2].baseURL)/status", in: cli.directory)
            store = (try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])?["store"] as? [String: Any] ?? [:]
            return store["available"] as? Bool == false
        }
        #expect(store["available"] as? Bool == false)
        #expect(store["unavailableSince"] != nil)
        let failingEdit = try cli.run(["customer", "add", "globex"])
        #expect(failingEdit.status != 0)
        #expect(failingEdit.stderr.contains("is unavailable") && failingEdit.stderr.contains("127.0.0.1:\(deployment.postgres.port)"))
        try await Task.sleep(until: outageClock + .seconds(12), clock: .continuous)
        // The outage lasts until the legacy client has fetched through it often too: about ten a second, fewer
        // on a busy machine, so the bound only keeps a stuck loop from holding the test.
        let outageFetches = 40
        _ = try await eventually(within: 120) { loop.fetchCount - fetchesBeforeOutage >= outageFetches }
        #expect(loop.newest > outageStarted, "no bundle was signed during the outage")
        let fetchedDuringOutage = loop.fetchCount - fetchesBeforeOutage

        try deployment.postgres.start()
        let result = loop.stop()
        #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
        #expect(fetchedDuringOutage >= outageFetches, "only \(fetchedDuringOutage) fetches during the outage")

        // Back: an edit made now reaches the two remaining instances, on new connections.
        servers.remove(at: 1)
        let current = try await deployment.served(by: servers[0].baseURL).version
        let edit = try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="])
        #expect(edit.status == 0, "\(edit.combined)")
        _ = try await waitUntilAllServe(above: current, deployment, servers)
        for server in servers {
            let readiness = try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory)
            #expect(String(decoding: readiness.body, as: UTF8.self) == "ready\n")
        }
    }

    /// Two admins edit the same customer from two hosts at once: every command succeeds (no serialization
    /// failure reaches them), versions strictly increase, and the final hosts are what the audit log says.
    @Test func twoCLIProcessesEditingOneCustomerConcurrentlyKeepVersionsAndTheLogConsistent() async throws {
        let deployment = try Deployment(instances: 0)
        defer { deployment.remove() }
        let cli = deployment.cli
        let failures = FailureList()
        let deadline = Date().addingTimeInterval(20)
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            // Bounded by the deadline and a count: each writer adds hosts and removes every other one.
            for number in 0..<400 where Date() < deadline {
                let host = "w\(writer)-\(number).example.com"
                do {
                    let added = try cli.run(["host", "add", "acme", host])
                    if added.status != 0 { failures.append("add \(host): \(added.combined)") }
                    if number % 2 == 1 {
                        let removed = try cli.run(["host", "remove", "acme", host])
                        if removed.status != 0 { failures.append("remove \(host): \(removed.combined)") }
                    }
                } catch {
                    failures.append("\(host): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")

        let log = try cli.run(["log", "--customer", "acme", "--limit", "100000", "--json"])
        #expect(log.status == 0)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(log.stdout)) as? [[String: Any]]).reversed()
        let versions = entries.compactMap { $0["version"] as? Int64 ?? ($0["version"] as? Int).map(Int64.init) }
        #expect(versions.count == entries.count && versions.count > 20)
        #expect(zip(versions, versions.dropFirst()).allSatisfy { $0 < $1 })

        // Replaying the log gives the hosts the store has.
        var replayed: Set<String> = []
        for entry in entries {
            let details = entry["details"] as? String ?? ""
            if let host = details.firstMatch(of: /^added host (\S+)/)?.1 { replayed.insert(String(host)) }
            if let host = details.firstMatch(of: /^removed host (\S+)/)?.1 { replayed.remove(String(host)) }
        }
        let list = try cli.run(["host", "list", "acme", "--json"])
        let stored = Set(try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]]).compactMap { $0["hostname"] as? String })
        #expect(stored == replayed)
        #expect(stored.contains("api.example.com"))
    }

    /// A SQLite deployment moves to PostgreSQL with `pinset store copy`: a client that accepted version N from
    /// the old deployment accepts the next bundle from the new one, and no audit entry is lost.
    @Test func aStoreCopyKeepsClientsAndTheAuditLog() async throws {
        let sqlite = try ServeEndToEndTests().populated()
        defer { sqlite.remove() }
        let old = try RunningServer(cli: sqlite)
        let anchor = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(sqlite.dataDir)/trust-cert.der")))
        let state = sqlite.directory.file("client-state")
        func updater(_ server: RunningServer) throws -> PinsetUpdater {
            PinsetUpdater(configuration: try PinsetClientConfiguration(
                serverURL: try #require(URL(string: server.baseURL)), customer: try CustomerName("acme"),
                trustCertificates: [anchor], stateDirectory: state
            ))
        }
        let accepted = try await updater(old).update()
        old.stop()
        let auditBefore = try sqlite.run(["log", "--limit", "100000", "--json"]).stdout

        let postgres = try TestPostgresServer()
        let copied = try ProcessRunner.run(PinsetCLI.binary, ["store", "copy", "--from", sqlite.database, "--to", postgres.url], environment: postgres.environment, timeout: 60)
        #expect(copied.status == 0, "\(copied.combined)")
        let again = try ProcessRunner.run(PinsetCLI.binary, ["store", "copy", "--from", sqlite.database, "--to", postgres.url], environment: postgres.environment, timeout: 60)
        #expect(again.status != 0 && again.stderr.contains("already holds Pinset data"))

        var moved = sqlite
        moved.databaseURL = postgres.url
        moved.environment = postgres.environment
        #expect(try moved.run(["log", "--limit", "100000", "--json"]).stdout == auditBefore)
        let new = try RunningServer(cli: moved)
        defer { new.stop() }
        let sameVersion = try await updater(new).update()
        #expect(sameVersion.version == accepted.version)
        #expect(try moved.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]).status == 0)
        var next: Int64 = 0
        for _ in 0..<100 where next <= accepted.version {
            next = (try? await updater(new).update().version) ?? 0
            if next <= accepted.version { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(next > accepted.version)
    }
}
