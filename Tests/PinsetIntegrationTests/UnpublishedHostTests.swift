import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// A host added before its pins, or left without pins by `--allow-last-pin`, must not shadow its pinned
/// include-subdomains parent: `pinset` does not publish it and says so, and the real client keeps pinning it.
struct UnpublishedHostTests {
    @Test func aHostWithoutPinsIsNotPublishedAndItsParentStillPinsIt() async throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "example.com", "--include-subdomains"]).status == 0)
        let parentKey = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
        let backupKey = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "example.com", "--hash", parentKey, "--hash", backupKey]).status == 0)

        let added = try cli.run(["host", "add", "acme", "login.example.com"])
        #expect(added.status == 0, "\(added.combined)")
        #expect(added.stderr.contains("not published"), "\(added.stderr)")
        #expect(added.stderr.contains("apply the pins of 'example.com'"), "\(added.stderr)")

        let out = cli.directory.file("out")
        let signed = try cli.run(["sign", "--out", out])
        #expect(signed.status == 0, "\(signed.combined)")
        let bundlePath = "\(out)/acme.json.signed"
        let verified = try cli.run(["verify", bundlePath, "--trust", cli.trustCertificate, "--customer", "acme"])
        #expect(verified.status == 0, "\(verified.combined)")
        #expect(verified.stdoutText.contains("example.com"))
        #expect(!verified.stdoutText.contains("login.example.com"))

        // The real client: login.example.com stays pinned by example.com, so a chain with another key fails.
        let state = try TemporaryDirectory(prefix: "pinset-client-state")
        defer { state.remove() }
        let updater = PinsetUpdater(configuration: try PinsetClientConfiguration(
            serverURL: try #require(URL(string: "http://127.0.0.1:9/")),
            customer: try CustomerName("acme"),
            trustCertificates: [try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(cli.dataDir)/trust-cert.der")))],
            stateDirectory: state.path
        ))
        let bundle = try [UInt8](Data(contentsOf: URL(fileURLWithPath: bundlePath)))
        _ = try await updater.seed(withBundle: bundle)
        let other = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "login")
        let otherDERPath = cli.directory.file("login.der")
        #expect(try ProcessRunner.run("openssl", ["x509", "-in", other.cert, "-outform", "der", "-out", otherDERPath]).status == 0)
        let otherDER = try [UInt8](Data(contentsOf: URL(fileURLWithPath: otherDERPath)))
        let verdict = updater.evaluator.evaluate(host: "login.example.com", chain: [otherDER])
        guard case .pinMismatch(_, let entry, _, _) = verdict else {
            Issue.record("login.example.com must stay pinned by example.com, got \(verdict)")
            return
        }
        #expect(entry == (try Hostname("example.com")))
    }

    @Test func removingTheLastPinSaysTheHostIsNoLongerPublished() throws {
        let cli = try PinsetCLI.initialized()
        defer { cli.remove() }
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        let key = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", key]).status == 0)
        let removed = try cli.run(["pin", "remove", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", key, "--allow-last-pin"])
        #expect(removed.status == 0, "\(removed.combined)")
        #expect(removed.stderr.contains("not published"), "\(removed.stderr)")
        #expect(removed.stderr.contains("any host the bundle does not list"), "\(removed.stderr)")
    }
}
