import Foundation
import PinsetTestSupport
import Testing

/// Pin edits are checked against the chain the host serves (a real `openssl s_server` on loopback) and refused
/// when the result would lock apps out.
@Suite(.serialized) struct LiveChainGuardTests {
    /// A fresh key's pin, never served: a spare.
    static let spareHash = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    struct Served {
        let cli: PinsetCLI
        let ca: String
        let leaf: (cert: String, key: String)
        let port: Int
        let server: BackgroundProcess
        var leafPin: String { (try? CLIPinSourceTests.opensslPin(certificate: leaf.cert)) ?? "" }
        /// Where every live check of these tests connects: the loopback server, validated under its name.
        var reach: [String] { ["--connect-to", "127.0.0.1", "--ca-file", ca] }

        func stop() {
            server.stop()
            cli.remove()
        }
    }

    /// acme's api.example.test at the port of a loopback s_server serving a leaf issued by a test CA.
    static func served() throws -> Served {
        let cli = try PinsetCLI.initialized()
        let pki = try CLIConnectToTests.serverPKI(in: cli.directory)
        let port = try FreePort.pick()
        let server = try BackgroundProcess("openssl", [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", pki.named.cert, "-key", pki.named.key, "-www", "-quiet",
        ], logDirectory: cli.directory.path, name: "s_server")
        let served = Served(cli: cli, ca: pki.ca, leaf: pki.named, port: port, server: server)
        guard FreePort.waitUntilListening(port: port) else {
            served.stop()
            throw Failure("s_server did not listen on \(port)")
        }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.test", "--port", "\(port)"]).status == 0)
        return served
    }

    @Test func removingTheOnlyMatchingPinIsRefusedAndChangesNothing() throws {
        let served = try Self.served()
        defer { served.stop() }
        let cli = served.cli
        let added = try cli.run(["pin", "add", "acme", "api.example.test", "--from-host", "api.example.test:\(served.port)", "--hash", Self.spareHash] + served.reach)
        #expect(added.status == 0, "\(added.combined)")

        let before = try cli.databaseDump()
        let refused = try cli.run(["pin", "remove", "acme", "api.example.test", "--hash", served.leafPin] + served.reach)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Refused"), "\(refused.stderr)")
        #expect(refused.stderr.contains(served.leafPin), "the live chain's SPKI is listed: \(refused.stderr)")
        #expect(refused.stderr.contains("Pins matching none: \(Self.spareHash)"), "\(refused.stderr)")
        #expect(try cli.databaseDump() == before)

        let dryRun = try cli.run(["pin", "remove", "acme", "api.example.test", "--hash", served.leafPin, "--dry-run"] + served.reach)
        #expect(dryRun.status != 0)
        #expect(dryRun.stdoutText.contains("- \(served.leafPin)  matches live leaf"), "\(dryRun.stdoutText)")
        #expect(dryRun.stdoutText.contains("would be refused"), "\(dryRun.stdoutText)")
        #expect(try cli.databaseDump() == before)

        let forced = try cli.run(["pin", "remove", "acme", "api.example.test", "--hash", served.leafPin, "--skip-live-check", "--reason", "leaf key compromised, new key on its way"])
        #expect(forced.status == 0, "\(forced.combined)")
        let log = try cli.run(["log", "--json"])
        #expect(log.stdoutText.contains("live-chain check skipped with --skip-live-check: leaf key compromised, new key on its way"), "\(log.stdoutText)")
    }

    @Test func aDryRunShowsWhichLiveCertificateEachPinMatchesAndChangesNothing() throws {
        let served = try Self.served()
        defer { served.stop() }
        let cli = served.cli
        let before = try cli.databaseDump()
        let dryRun = try cli.run(["pin", "add", "acme", "api.example.test", "--hash", served.leafPin, "--hash", Self.spareHash, "--dry-run"] + served.reach)
        #expect(dryRun.status == 0, "\(dryRun.combined)")
        #expect(dryRun.stdoutText.contains("+ \(served.leafPin)  matches live leaf (api.example.test)"), "\(dryRun.stdoutText)")
        #expect(dryRun.stdoutText.contains("+ \(Self.spareHash)  matches no live certificate"), "\(dryRun.stdoutText)")
        #expect(dryRun.stdoutText.contains("would be accepted"), "\(dryRun.stdoutText)")
        #expect(try cli.databaseDump() == before)

        // The same edit for real passes and records what it was checked against.
        #expect(try cli.run(["pin", "add", "acme", "api.example.test", "--hash", served.leafPin, "--hash", Self.spareHash] + served.reach).status == 0)
        #expect(try cli.run(["log", "--json"]).stdoutText.contains("live chain of api.example.test:\(served.port) checked: matches"))
    }

    @Test func aSetWhosePinsAreAllInTheLiveChainIsFlagged() throws {
        let served = try Self.served()
        defer { served.stop() }
        let added = try served.cli.run(["pin", "add", "acme", "api.example.test", "--hash", served.leafPin] + served.reach)
        #expect(added.status == 0, "\(added.combined)")
        #expect(added.stderr.contains("none is a backup (RFC 7469)"), "\(added.stderr)")
        #expect(added.stderr.contains("Pin a spare key"), "\(added.stderr)")

        let withSpare = try served.cli.run(["pin", "add", "acme", "api.example.test", "--hash", Self.spareHash] + served.reach)
        #expect(withSpare.status == 0, "\(withSpare.combined)")
        #expect(!withSpare.stderr.contains("none is a backup"), "\(withSpare.stderr)")
    }

    @Test func aSetMatchingNothingLiveIsRefused() throws {
        let served = try Self.served()
        defer { served.stop() }
        let before = try served.cli.databaseDump()
        let refused = try served.cli.run(["pin", "add", "acme", "api.example.test", "--hash", Self.spareHash] + served.reach)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("leaf \(served.leafPin)"), "\(refused.stderr)")
        #expect(try served.cli.databaseDump() == before)
    }

    @Test func anUnreachableHostIsRefusedUnlessMarkedOrForced() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        let port = try FreePort.pick()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.test", "--port", "\(port)"]).status == 0)
        let before = try cli.databaseDump()
        let refused = try cli.run(["pin", "add", "acme", "api.example.test", "--hash", Self.spareHash, "--connect-to", "127.0.0.1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("could not be checked against its live chain"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--unmonitored"), "\(refused.stderr)")
        #expect(try cli.databaseDump() == before)

        #expect(try cli.run(["pin", "add", "acme", "api.example.test", "--hash", Self.spareHash, "--skip-live-check"]).status != 0, "--skip-live-check needs --reason")
        #expect(try cli.databaseDump() == before)

        let marked = try cli.run(["host", "update", "acme", "api.example.test", "--unmonitored", "internal network only"])
        #expect(marked.status == 0, "\(marked.combined)")
        #expect(try cli.run(["host", "list", "acme"]).stdoutText.contains("no: internal network only"))
        let added = try cli.run(["pin", "add", "acme", "api.example.test", "--hash", Self.spareHash])
        #expect(added.status == 0, "\(added.combined)")
        #expect(added.stderr.contains("unmonitored (internal network only)"), "\(added.stderr)")
        let log = try cli.run(["log", "--json"]).stdoutText
        #expect(log.contains("unmonitored (live-chain checks skipped): internal network only"))
        #expect(log.contains("live-chain check skipped: host unmonitored (internal network only)"))

        #expect(try cli.run(["host", "update", "acme", "api.example.test", "--monitored"]).status == 0)
        #expect(try cli.run(["pin", "add", "acme", "api.example.test", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "--connect-to", "127.0.0.1"]).status != 0)
    }

    @Test func movingAHostToAPortThatServesNothingIsRefused() throws {
        let served = try Self.served()
        defer { served.stop() }
        #expect(try served.cli.run(["pin", "add", "acme", "api.example.test", "--hash", served.leafPin, "--hash", Self.spareHash] + served.reach).status == 0)
        let before = try served.cli.databaseDump()
        let moved = try served.cli.run(["host", "update", "acme", "api.example.test", "--port", "\(try FreePort.pick())"] + served.reach)
        #expect(moved.status != 0)
        #expect(moved.stderr.contains("could not be checked"), "\(moved.stderr)")
        #expect(try served.cli.databaseDump() == before)
        let subdomains = try served.cli.run(["host", "update", "acme", "api.example.test", "--include-subdomains", "true"] + served.reach)
        #expect(subdomains.status == 0, "\(subdomains.combined)")
    }

    @Test func aHostAddedWithPinsThatMatchNothingLiveIsRefused() throws {
        let served = try Self.served()
        defer { served.stop() }
        let cli = served.cli
        let other = cli.directory.file("default.example.test.pem")
        #expect(try cli.run(["customer", "add", "globex"]).status == 0)
        let before = try cli.databaseDump()
        let refused = try cli.run(["host", "add", "globex", "api.example.test", "--port", "\(served.port)", "--certificate", other] + served.reach)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("no pin of api.example.test would match"), "\(refused.stderr)")
        #expect(try cli.databaseDump() == before)
        let accepted = try cli.run(["host", "add", "globex", "api.example.test", "--port", "\(served.port)", "--certificate", served.leaf.cert] + served.reach)
        #expect(accepted.status == 0, "\(accepted.combined)")

        let added = try cli.run(["host", "add", "acme", "api2.example.test", "--port", "\(served.port)", "--certificate", served.leaf.cert, "--connect-to", "127.0.0.1", "--ca-file", served.ca])
        // The server presents the api.example.test certificate, which is not valid for api2.example.test.
        #expect(added.status != 0)
        #expect(added.stderr.contains("could not be checked"), "\(added.stderr)")
    }
}
