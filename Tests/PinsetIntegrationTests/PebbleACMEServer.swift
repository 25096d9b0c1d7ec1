#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport

/// Debian's `pebble`, Let's Encrypt's test ACME server, on free loopback ports for one test, stopped by its pid.
///
/// It issues from a root and an intermediate it generates at start (the root is served by its management
/// listener), validates no challenge (`PEBBLE_VA_ALWAYS_VALID`), never sleeps (`PEBBLE_VA_NOSLEEP`) and
/// accepts every nonce (`PEBBLE_WFE_NONCEREJECT=0`), so an issuance takes well under a second and reaches
/// nothing beyond loopback. Its API listener's certificate is made here with openssl; the ACME clients trust it
/// through `LEGO_CA_CERTIFICATES` (lego) and `REQUESTS_CA_BUNDLE` (certbot).
final class PebbleACMEServer: Sendable {
    let process: BackgroundProcess
    /// `https://127.0.0.1:PORT/dir`.
    let directoryURL: String
    /// PEM of the certificate pebble's API listener presents.
    let listenerCertificate: String
    /// PEM of the root pebble issues under.
    let issuingRoot: String

    /// The programs these tests run; the tests fail, never skip, when one is missing.
    static let requiredPrograms = ["pebble", "certbot", "lego", "nginx", "openssl", "curl"]

    static func checkInstalled() throws {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin"
        let missing = requiredPrograms.filter { name in
            !path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
        }
        if !missing.isEmpty {
            throw Failure("missing \(missing.joined(separator: ", ")): the ACME rotation tests need Debian's pebble, certbot, lego and nginx; run scripts/install-dependencies")
        }
    }

    init(in directory: TemporaryDirectory) throws {
        try Self.checkInstalled()
        let home = directory.file("pebble")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        listenerCertificate = "\(home)/listener-cert.pem"
        let listenerKey = "\(home)/listener-key.pem"
        let made = try ProcessRunner.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=pebble on loopback", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", listenerKey, "-out", listenerCertificate,
        ])
        guard made.status == 0 else { throw Failure("openssl could not make pebble's listener certificate: \(made.stderr)") }

        let apiPort = try FreePort.pick()
        let managementPort = try FreePort.pick()
        // Unused (no challenge is validated) but required by pebble's configuration.
        let httpValidationPort = try FreePort.pick()
        let tlsValidationPort = try FreePort.pick()
        let configuration: [String: Any] = ["pebble": [
            "listenAddress": "127.0.0.1:\(apiPort)", "managementListenAddress": "127.0.0.1:\(managementPort)",
            "certificate": listenerCertificate, "privateKey": listenerKey,
            "httpPort": httpValidationPort, "tlsPort": tlsValidationPort,
            "ocspResponderURL": "", "externalAccountBindingRequired": false,
        ]]
        let configPath = "\(home)/pebble-config.json"
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configPath))
        process = try BackgroundProcess("pebble", ["-config", configPath], logDirectory: home, name: "pebble", environment: [
            "PEBBLE_VA_ALWAYS_VALID": "1", "PEBBLE_VA_NOSLEEP": "1", "PEBBLE_WFE_NONCEREJECT": "0",
        ])
        directoryURL = "https://127.0.0.1:\(apiPort)/dir"
        issuingRoot = "\(home)/issuing-root.pem"
        guard FreePort.waitUntilListening(port: apiPort), FreePort.waitUntilListening(port: managementPort) else {
            process.stop(signal: SIGKILL)
            throw Failure("pebble did not start: \(process.stdout)\n\(process.stderr)")
        }
        let root = try ProcessRunner.run("curl", ["-sS", "--max-time", "10", "--cacert", listenerCertificate, "-o", issuingRoot,
                                                  "https://127.0.0.1:\(managementPort)/roots/0"])
        guard root.status == 0, let pem = try? String(contentsOfFile: issuingRoot, encoding: .utf8), pem.contains("BEGIN CERTIFICATE") else {
            stop()
            throw Failure("pebble's management listener did not serve its root: \(root.stderr)")
        }
    }

    /// What lego and certbot need in their environment to trust pebble's API listener.
    var clientEnvironment: [String: String] {
        ["LEGO_CA_CERTIFICATES": listenerCertificate, "REQUESTS_CA_BUNDLE": listenerCertificate]
    }

    func stop() { process.stop(signal: SIGTERM) }
}
