import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// The setup shared by the tests that run the client library against `pinset serve`.
extension PinsetCLI {
    /// The hash of a key no test holds: the pin that stays when a test removes the leaf's, so that the pin set
    /// remains valid (two pins) and a rotation can be observed.
    static let backupPin = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    /// Customer `acme` pinning `api.example.com` to a fresh leaf certificate and ``backupPin``; returns the leaf.
    /// The host is not served, hence `--force`.
    func addAcmePinnedToLeafAndBackup() throws -> (key: String, cert: String) {
        #expect(try run(["customer", "add", "acme"]).status == 0)
        #expect(try run(["host", "add", "acme", "api.example.com"]).status == 0)
        let leaf = try CLIPinSourceTests.makeCertificate(in: directory, name: "api")
        #expect(try run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", leaf.cert, "--hash", Self.backupPin]).status == 0)
        return leaf
    }

    /// A client of `acme` at `server`, trusting the certificate `pinset init` wrote, keeping its state in
    /// `stateDirectory`.
    func acmeClientConfiguration(server: RunningServer, stateDirectory: TemporaryDirectory) throws -> PinsetClientConfiguration {
        let trust = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(dataDir)/trust-cert.der")))
        return try PinsetClientConfiguration(
            serverURL: try #require(URL(string: server.baseURL)),
            customer: try CustomerName("acme"),
            trustCertificates: [trust],
            stateDirectory: stateDirectory.path
        )
    }
}
