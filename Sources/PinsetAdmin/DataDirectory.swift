import PinsetSigning
import PinsetStore

/// The files of a deployment's data directory, each named in this one place: the database, the default signing
/// identity, customers' own identities, and the pending key of a signer request. Each may be moved elsewhere by
/// an override (`--database`, `--customer-key-dir`, the server's `signingKeyPath` and `certificatePath`).
public struct DataDirectory: Sendable, Equatable {
    public let path: String
    public var databaseOverride: String?
    public var signingKeyOverride: String?
    public var certificateOverride: String?
    public var customerKeyDirectoryOverride: String?

    public init(
        _ path: String, database: String? = nil, signingKey: String? = nil, certificate: String? = nil,
        customerKeyDirectory: String? = nil
    ) {
        self.path = path
        self.databaseOverride = database
        self.signingKeyOverride = signingKey
        self.certificateOverride = certificate
        self.customerKeyDirectoryOverride = customerKeyDirectory
    }

    /// The SQLite file, or the `postgres://` URL given in its place.
    public var databasePath: String { databaseOverride ?? "\(path)/pinset.sqlite" }

    /// The store: `databasePath` parsed (a path or a postgres:// URL).
    public func storeLocation() throws -> StoreLocation {
        try StoreLocation(parsing: databasePath)
    }

    /// The default identity's private key (mode 0600).
    public var keyPath: String { signingKeyOverride ?? "\(path)/signing-key.pem" }
    /// The default identity's certificate chain (PEM, signer first).
    public var certificatePEMPath: String { certificateOverride ?? "\(path)/trust-cert.pem" }
    /// The certificate the apps of the default identity embed (DER).
    public var certificateDERPath: String { "\(path)/trust-cert.der" }
    /// Customers with their own identity keep it in `<customerKeyDirectory>/<customer>/`.
    public var customerKeyDirectory: String { customerKeyDirectoryOverride ?? "\(path)/customers" }

    public var signingIdentityLocations: SigningIdentityLocations {
        SigningIdentityLocations(
            defaultKeyPath: keyPath, defaultCertificatePath: certificatePEMPath, defaultAnchorPath: certificateDERPath,
            customerKeyDirectory: customerKeyDirectory
        )
    }

    /// The default identity's three files.
    public var defaultIdentityFiles: IdentityFileSet {
        IdentityFileSet(keyPath: keyPath, certificatePEMPath: certificatePEMPath, certificateDERPath: certificateDERPath)
    }
}
