import PinsetAdmin
import PinsetStore
import Testing

@Suite struct DataDirectoryTests {
    @Test func everyFileLivesInTheDirectoryUnlessMoved() throws {
        let directory = DataDirectory("/var/lib/pinset")
        #expect(directory.databasePath == "/var/lib/pinset/pinset.sqlite")
        #expect(directory.keyPath == "/var/lib/pinset/signing-key.pem")
        #expect(directory.certificatePEMPath == "/var/lib/pinset/trust-cert.pem")
        #expect(directory.certificateDERPath == "/var/lib/pinset/trust-cert.der")
        #expect(directory.customerKeyDirectory == "/var/lib/pinset/customers")
        #expect(directory.defaultIdentityFiles.pendingKeyPath == "/var/lib/pinset/signing-key.pending.pem")
        #expect(directory.defaultIdentityFiles.requestPath == "/var/lib/pinset/signer-request.csr")
        let locations = directory.signingIdentityLocations
        #expect(locations.defaultAnchorPath == "/var/lib/pinset/trust-cert.der")
        #expect(locations.directory(of: try .init("acme")) == "/var/lib/pinset/customers/acme")
    }

    @Test func overridesMoveOneFileEach() throws {
        let directory = DataDirectory(
            "/data", database: "postgres://pinset@db.internal/pinset", signingKey: "/run/credentials/signing-key.pem",
            certificate: "/run/credentials/trust-cert.pem", customerKeyDirectory: "/keys"
        )
        #expect(directory.keyPath == "/run/credentials/signing-key.pem")
        #expect(directory.certificatePEMPath == "/run/credentials/trust-cert.pem")
        // Apps embed the anchor the data directory keeps, wherever the signer's files were moved.
        #expect(directory.certificateDERPath == "/data/trust-cert.der")
        #expect(directory.customerKeyDirectory == "/keys")
        #expect(try directory.storeLocation().filePath == nil)
    }
}
