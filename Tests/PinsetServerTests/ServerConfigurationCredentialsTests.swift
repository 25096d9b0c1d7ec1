import Foundation
import PinsetServer
import PinsetTestSupport
import Testing

/// systemd credentials supply the default signing identity only where nothing else names it.
@Suite struct ServerConfigurationCredentialsTests {
    @Test func keyAndCertificateComeFromTheCredentialsDirectory() throws {
        let credentials = try TemporaryDirectory(prefix: "pinset-credentials")
        defer { credentials.remove() }
        let key = try credentials.write(ServerConfiguration.keyCredential, "key", mode: 0o600)
        let certificate = try credentials.write(ServerConfiguration.certificateCredential, "certificate")
        var settings = ServerConfiguration()
        settings.applyCredentials(environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        #expect(settings.resolvedSigningKeyPath == key)
        #expect(settings.resolvedCertificatePath == certificate)
    }

    @Test func aKeyNamedInTheConfigurationWins() throws {
        let credentials = try TemporaryDirectory(prefix: "pinset-credentials")
        defer { credentials.remove() }
        _ = try credentials.write(ServerConfiguration.keyCredential, "key", mode: 0o600)
        _ = try credentials.write(ServerConfiguration.certificateCredential, "certificate")
        var settings = ServerConfiguration()
        settings.signingKeyPath = "/etc/pinset/signing-key.pem"
        settings.applyCredentials(environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        #expect(settings.resolvedSigningKeyPath == "/etc/pinset/signing-key.pem")
        // Key and certificate go together: a certificate credential alone would not match the configured key.
        #expect(settings.resolvedCertificatePath == "\(settings.dataDirectory)/trust-cert.pem")
    }

    @Test func withoutAKeyCredentialNothingChanges() throws {
        let credentials = try TemporaryDirectory(prefix: "pinset-credentials")
        defer { credentials.remove() }
        _ = try credentials.write(ServerConfiguration.certificateCredential, "certificate")
        var settings = ServerConfiguration()
        let before = settings
        settings.applyCredentials(environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        settings.applyCredentials(environment: [:])
        #expect(settings == before)
    }
}
