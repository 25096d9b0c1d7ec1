import Foundation
import Logging
import PinsetServer
import PinsetStore
import PinsetTestSupport
import Testing

/// Publish windows end to end: the server (in this process, so that its signing passes run on a clock the test
/// moves) lists a pin from its window's start and drops it at its end; the bundles served are checked by
/// `openssl cms -verify`, the legacy GCX client and `pinset client update`.
@Suite(.serialized) struct PinWindowEndToEndTests {
    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    /// The served bundle of `customer`, accepted by `openssl cms -verify` under the data directory's trust certificate:
    /// its bytes and payload.
    static func served(_ customer: String, port: UInt16, cli: PinsetCLI) throws -> (bytes: [UInt8], payload: [String: Any]) {
        let file = cli.directory.file("\(customer)-\(UUID().uuidString.prefix(6)).signed")
        let fetched = try ProcessRunner.run("curl", ["-sS", "--fail", "--max-time", "10", "-o", file, "http://127.0.0.1:\(port)/\(customer).json.signed"])
        guard fetched.status == 0 else { throw Failure("curl: \(fetched.stderr)") }
        let verified = try ProcessRunner.run("openssl", ["cms", "-verify", "-inform", "DER", "-in", file, "-CAfile", cli.trustCertificate, "-purpose", "any"])
        guard verified.status == 0 else { throw Failure("openssl cms -verify refused the served bundle: \(verified.stderr)") }
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])
        return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))), payload)
    }

    /// Waits (boundedly) for the first bundle served above `version`, accepted by OpenSSL as `served` does.
    static func served(after version: Int64, _ customer: String, port: UInt16, cli: PinsetCLI) throws -> (version: Int64, bytes: [UInt8], payload: [String: Any]) {
        var current = try served(customer, port: port, cli: cli)
        for _ in 0..<100 where (current.payload["version"] as? Int64 ?? 0) <= version {
            usleep(100_000)
            current = try served(customer, port: port, cli: cli)
        }
        let servedVersion = try #require(current.payload["version"] as? Int64)
        #expect(servedVersion > version)
        return (servedVersion, current.bytes, current.payload)
    }

    /// The `pin-sha256` hashes the payload lists for its only host.
    static func listedKeys(_ payload: [String: Any]) -> Set<String> {
        let hosts = payload["hashes"] as? [[String: Any]] ?? []
        return Set(hosts.flatMap { $0["pin-sha256"] as? [String] ?? [] })
    }

    @Test func pinsEnterAndLeaveServedBundlesAtTheirWindows() async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let steady = try LegacyClientPinTests.certificate("steady", in: cli.directory)
        let arriving = try LegacyClientPinTests.certificate("arriving", in: cli.directory)
        let retiring = try LegacyClientPinTests.certificate("retiring", in: cli.directory)
        let keys = (steady: try CLIPinSourceTests.opensslPin(certificate: steady.cert), arriving: try CLIPinSourceTests.opensslPin(certificate: arriving.cert),
                    retiring: try CLIPinSourceTests.opensslPin(certificate: retiring.cert))
        let skip = ["--skip-live-check", "--reason", "test host not served"]
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)

        #expect(try cli.run(["pin", "add", "acme", "api.example.com", "--certificate", steady.cert] + skip).status == 0)

        // Bad windows are refused with what to do, and store nothing. (Before the windows below are set: they lie
        // close ahead of the real clock.)
        let before = try cli.databaseDump()
        let later = Date().addingTimeInterval(3_600)
        let backwards = try cli.run(["pin", "add", "acme", "api.example.com", "--hash", LiveChainGuardTests.spareHash,
                                     "--not-before", Self.iso(later.addingTimeInterval(10)), "--not-after", Self.iso(later)] + skip)
        #expect(backwards.status != 0 && backwards.stderr.contains("--not-before must be earlier than --not-after"), "\(backwards.combined)")
        let garbled = try cli.run(["pin", "add", "acme", "api.example.com", "--hash", LiveChainGuardTests.spareHash, "--not-after", "next tuesday"] + skip)
        #expect(garbled.status != 0 && garbled.stderr.contains("is not an ISO 8601 time"), "\(garbled.combined)")
        let ended = try cli.run(["pin", "window", "acme", "api.example.com", "--hash", keys.steady, "--not-after", "2020-01-01"] + skip)
        #expect(ended.status != 0 && ended.stderr.contains("the pin would never be listed"), "\(ended.combined)")
        let unknown = try cli.run(["pin", "window", "acme", "api.example.com", "--hash", LiveChainGuardTests.spareHash, "--clear"] + skip)
        #expect(unknown.status != 0 && unknown.stderr.contains("has no pin"), "\(unknown.combined)")
        #expect(try cli.databaseDump() == before)

        // The server's clock starts here; the windows lie ahead of it and of the real clock, by less than the
        // clock skew `pinset client` allows, so that bundles signed at them are accepted.
        let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        let enters = clock.now().addingTimeInterval(40), leaves = clock.now().addingTimeInterval(50)
        for (certificate, window) in [(arriving.cert, ["--not-before", Self.iso(enters)]), (retiring.cert, ["--not-after", Self.iso(leaves)])] {
            let added = try cli.run(["pin", "add", "acme", "api.example.com", "--certificate", certificate] + window + skip)
            #expect(added.status == 0, "\(added.combined)")
        }

        // `pin list` shows the windows and what the next bundles hold.
        let list = try cli.run(["pin", "list", "acme"])
        #expect(list.stdoutText.contains("from \(Self.iso(enters)): + \(keys.arriving)"), "\(list.stdoutText)")
        #expect(list.stdoutText.contains("from \(Self.iso(leaves)): - \(keys.retiring)"), "\(list.stdoutText)")
        let listed = try JSONSerialization.jsonObject(with: Data(try cli.run(["pin", "list", "acme", "--json"]).stdout)) as? [String: Any]
        let pins = ((listed?["hosts"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]]) ?? []
        let arrivingEntry = pins.first { $0["pin"] as? String == keys.arriving }
        #expect(arrivingEntry?["listed"] as? Bool == false && arrivingEntry?["windowNotBefore"] as? String == Self.iso(enters))

        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = cli.dataDir
        configuration.changePollIntervalSeconds = 0.1
        configuration.accessLog = false
        let service = try PinsetService(configuration: configuration, logger: Logger(label: "pin-window-test", factory: { _ in SwiftLogNoOpLogHandler() }), clock: clock.now)
        let port = try service.start()
        let legacy = try LegacyClientPinTests.legacyClient(cli)
        let state = cli.directory.file("app-state")

        /// Waits (boundedly) for the first served bundle above `version`, then checks it every way.
        func bundle(after version: Int64) throws -> (version: Int64, keys: Set<String>, legacy: LegacyGCXClient.Payload) {
            let current = try Self.served(after: version, "acme", port: port, cli: cli)
            let served = current.version
            let update = try cli.run(["client", "update", "--server", "http://127.0.0.1:\(port)", "--customer", "acme", "--trust", cli.trustCertificate,
                                      "--state-dir", state, "--json"])
            #expect(update.status == 0, "\(update.combined)")
            let accepted = try JSONSerialization.jsonObject(with: Data(update.stdout)) as? [String: Any]
            #expect(accepted?["version"] as? Int64 == served, "pinset client accepts the bundle served")
            return (served, Self.listedKeys(current.payload), try legacy.accept(bundle: current.bytes, now: clock.now()))
        }

        do {
            let first = try bundle(after: 0)
            #expect(first.keys == [keys.steady, keys.retiring])
            #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [retiring.der], payload: first.legacy))
            #expect(try !legacy.acceptsConnection(to: "api.example.com", chain: [arriving.der], payload: first.legacy))

            clock.advance(by: enters.timeIntervalSince(clock.now()))
            let second = try bundle(after: first.version)
            #expect(second.keys == [keys.steady, keys.retiring, keys.arriving])
            #expect(try legacy.acceptsConnection(to: "api.example.com", chain: [arriving.der], payload: second.legacy))

            clock.advance(by: leaves.timeIntervalSince(clock.now()))
            let third = try bundle(after: second.version)
            #expect(third.keys == [keys.steady, keys.arriving])
            #expect(try !legacy.acceptsConnection(to: "api.example.com", chain: [retiring.der], payload: third.legacy))

            let audit = try cli.run(["log", "--customer", "acme", "--json"])
            let entries = try JSONSerialization.jsonObject(with: Data(audit.stdout)) as? [[String: Any]] ?? []
            let published = entries.filter { $0["action"] as? String == "pin.publish" }.compactMap { $0["version"] as? Int64 }
            #expect(Set(published) == [second.version, third.version], "each change is audited at its version: \(audit.combined)")
        } catch {
            await service.shutdown()
            throw error
        }
        await service.shutdown()
    }

    /// A window that would leave a monitored host with no published pin matching its live chain is refused when
    /// it is set, whenever it would take effect.
    @Test func aScheduledRemovalThatWouldLockAppsOutIsRefusedWhenMade() throws {
        let served = try LiveChainGuardTests.served()
        defer { served.stop() }
        let cli = served.cli
        let added = try cli.run(["pin", "add", "acme", "api.example.test", "--from-host", "api.example.test:\(served.port)", "--hash", LiveChainGuardTests.spareHash] + served.reach)
        #expect(added.status == 0, "\(added.combined)")
        let before = try cli.databaseDump()
        let retireAt = Self.iso(Date().addingTimeInterval(30 * 86_400))
        let refused = try cli.run(["pin", "window", "acme", "api.example.test", "--hash", served.leafPin, "--not-after", retireAt] + served.reach)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Refused: from \(retireAt)") && refused.stderr.contains(served.leafPin), "\(refused.stderr)")
        #expect(try cli.databaseDump() == before)
        // The spare entering later does not help either: at its start the leaf is gone already.
        let spare = try cli.run(["pin", "window", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--not-before", retireAt] + served.reach)
        #expect(spare.status == 0, "a pin entering later while the live one stays is accepted: \(spare.combined)")
    }

    /// How a hold ends: the host serves a key the remaining pins match, or, whatever the monitor keeps being shown
    /// (someone holding the retiring key between the trust server and the host can show it that key), a day passes.
    enum HoldEnd: String, CaseIterable, Sendable {
        case hostServesTheNewKey
        case aDayPassesWhileTheOldKeyIsShown
    }

    /// A host rolled back, after the schedule was accepted, to the key whose window then ends: the server's monitor
    /// sees that key served (a real `openssl s_server`), so the pass keeps the pin listed past its window, and lets it
    /// leave once the host serves a key the remaining pins match, or a day after the window's end at the latest.
    @Test(arguments: HoldEnd.allCases) func aPinLeavingItsWindowIsHeldWhileTheHostServesOnlyItsKey(_ end: HoldEnd) async throws {
        let served = try LiveChainGuardTests.served()
        defer { served.stop() }
        let cli = served.cli
        let renewed = try CLIConnectToTests.renewedCertificate(in: cli.directory)
        let keys = (old: served.leafPin, new: try CLIPinSourceTests.opensslPin(certificate: renewed.cert))
        func serve(_ certificate: (cert: String, key: String)) throws -> BackgroundProcess {
            let server = try BackgroundProcess("openssl", ["s_server", "-accept", "127.0.0.1:\(served.port)", "-cert", certificate.cert, "-key", certificate.key, "-www", "-quiet"],
                                               logDirectory: cli.directory.path, name: "s_server-\(UUID().uuidString.prefix(6))")
            guard FreePort.waitUntilListening(port: served.port) else {
                server.stop()
                throw Failure("s_server did not listen on \(served.port): \(server.stderr)")
            }
            return server
        }
        for pin in [["--from-host", "api.example.test:\(served.port)"], ["--certificate", renewed.cert]] {
            let added = try cli.run(["pin", "add", "acme", "api.example.test"] + pin + served.reach)
            #expect(added.status == 0, "\(added.combined)")
        }
        // The host moves to the new key; the old one is scheduled to leave, which the guard accepts.
        served.server.stop()
        var current = try serve(renewed)
        defer { current.stop() }
        let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        let leaves = clock.now().addingTimeInterval(40)
        let scheduled = try cli.run(["pin", "window", "acme", "api.example.test", "--hash", keys.old, "--not-after", Self.iso(leaves)] + served.reach)
        #expect(scheduled.status == 0, "\(scheduled.combined)")
        // Then a rollback nobody planned for: the host serves the old key again.
        current.stop()
        current = try serve(served.leaf)

        // The monitor reaches the host at the loopback s_server and validates it under the test CA, as configured.
        let configurationFile = try cli.directory.write("hold-config.json", """
            {"host": "127.0.0.1", "port": 0, "dataDirectory": "\(cli.dataDir)", "changePollIntervalSeconds": 0.1, "accessLog": false,
             "monitoring": {"intervalSeconds": 600, "timeoutSeconds": 5, "caFile": "\(served.ca)",
                            "connectTo": {"api.example.test": "127.0.0.1:\(served.port)"}}}
            """)
        let configuration = try ServerConfiguration.load(path: configurationFile)
        let service = try PinsetService(configuration: configuration, logger: Logger(label: "pin-window-hold-test", factory: { _ in SwiftLogNoOpLogHandler() }), clock: clock.now)
        let port = try service.start()
        let monitor = try #require(service.monitor)

        /// The first served bundle above `version`: its version and listed keys.
        func bundle(after version: Int64) throws -> (version: Int64, keys: Set<String>) {
            let current = try Self.served(after: version, "acme", port: port, cli: cli)
            return (current.version, Self.listedKeys(current.payload))
        }

        do {
            let first = try bundle(after: 0)
            #expect(first.keys == [keys.old, keys.new])
            await monitor.runPass()
            clock.advance(by: leaves.timeIntervalSince(clock.now()) + 1)
            // An edit after the window's end: the pass that signs it has applied the windows first.
            let spare = try cli.run(["pin", "add", "acme", "api.example.test", "--hash", LiveChainGuardTests.spareHash, "--skip-live-check", "--reason", "spare key, not served"])
            #expect(spare.status == 0, "\(spare.combined)")
            let held = try bundle(after: first.version)
            #expect(held.keys == [keys.old, keys.new, LiveChainGuardTests.spareHash], "the old key stays listed while it is the only one served")

            switch end {
            case .hostServesTheNewKey:
                // The host serves the new key again: the next pass lets the old one go.
                current.stop()
                current = try serve(renewed)
            case .aDayPassesWhileTheOldKeyIsShown:
                // Still only the old key, seen afresh a day after the window's end: the pin leaves anyway.
                clock.advance(by: PinStore.maximumPinWindowHold)
            }
            await monitor.runPass()
            let released = try bundle(after: held.version)
            #expect(released.keys == [keys.new, LiveChainGuardTests.spareHash])
            let audit = try cli.run(["log", "--customer", "acme", "--json"])
            let entries = try JSONSerialization.jsonObject(with: Data(audit.stdout)) as? [[String: Any]] ?? []
            #expect(entries.contains { $0["action"] as? String == "pin.publish" && $0["version"] as? Int64 == released.version }, "\(audit.combined)")
        } catch {
            await service.shutdown()
            throw error
        }
        await service.shutdown()
    }
}
