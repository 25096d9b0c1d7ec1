import Foundation
@testable import PinsetCore
import Testing

/// The reading of a system's PEM bundle of roots, as macOS keeps one at /etc/ssl/cert.pem: run here on the
/// Debian bundle, and on one with a damaged certificate.
@Suite struct SystemTrustRootsTests {
    @Test func everyCertificateOfTheBundleIsRead() throws {
        let path = "/etc/ssl/certs/ca-certificates.crt"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let blocks = text.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        #expect(blocks > 50)
        #expect(SystemTrustRoots.certificates(inBundle: path).count == blocks)
    }

    @Test func aDamagedCertificateCostsOnlyItself() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinset-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let all = try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)
        let blocks = all.components(separatedBy: "-----END CERTIFICATE-----").prefix(3).map { $0 + "-----END CERTIFICATE-----\n" }
        let damaged = "-----BEGIN CERTIFICATE-----\nTUlJQg==\n-----END CERTIFICATE-----\n"
        let path = directory.appendingPathComponent("cert.pem").path
        try (blocks[0] + damaged + blocks[1] + blocks[2]).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(SystemTrustRoots.certificates(inBundle: path).count == 3)
        #expect(SystemTrustRoots.certificates(inBundle: directory.appendingPathComponent("missing.pem").path).isEmpty)
    }
}
