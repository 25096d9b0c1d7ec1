import PinsetFileSystem

extension ServerConfiguration {
    /// systemd's credential names for the default signing identity (`LoadCredential=signing-key.pem:…`).
    public static let keyCredential = "signing-key.pem"
    public static let certificateCredential = "trust-cert.pem"

    /// Takes the default signing key (and certificate, if given) from systemd credentials when the service
    /// passes them and neither the configuration nor the command line names a key file.
    ///
    /// systemd copies a credential into a directory only the service can read, at start: the key then need not
    /// be readable from the data directory at all. A credential is a snapshot, so a new signer installed
    /// with `pinset signer install` into the credential's source takes effect at the next restart. Key and
    /// certificate are taken together when both are passed, so that they always match.
    public mutating func applyCredentials(environment: [String: String]) {
        guard signingKeyPath == nil, let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return }
        let key = "\(directory)/\(Self.keyCredential)"
        guard AtomicFile.exists(key) else { return }
        signingKeyPath = key
        let certificate = "\(directory)/\(Self.certificateCredential)"
        if certificatePath == nil && AtomicFile.exists(certificate) {
            certificatePath = certificate
        }
    }
}
