import PinsetCore
import X509

/// The certificate authorities a TLS server's chain must lead to — normal validation, before any pin check.
///
/// `system` reads the operating system's bundle of root certificates (Linux: the distribution's CA file; macOS:
/// `/etc/ssl/cert.pem`). An iOS app cannot read such a file; there, use certificates the app carries or evaluate
/// with Security.framework and pass the resulting chain to `PinEvaluator`.
public struct TLSTrustRoots: Sendable {
    let store: CertificateStore

    /// The system's root certificates.
    public static var system: TLSTrustRoots { TLSTrustRoots(store: SystemTrustRoots.store) }

    /// Exactly these roots (a private CA, or a test CA).
    public init(certificates: [Certificate]) {
        self.store = CertificateStore(certificates)
    }

    /// Exactly these roots, each element one file's contents in DER or PEM (a PEM file may hold several).
    public init(certificateFiles: [[UInt8]]) throws(InputError) {
        var certificates: [Certificate] = []
        for (index, bytes) in certificateFiles.enumerated() {
            certificates += try PinMaterial.certificates(fromFileContents: bytes, origin: "trust root #\(index + 1)")
        }
        self.init(certificates: certificates)
    }

    private init(store: CertificateStore) {
        self.store = store
    }
}
