import Foundation
import X509

/// The operating system's root certificates, for validating a TLS server's chain before any pin check.
///
/// On Linux, swift-certificates reads the distribution's CA file. It reads nothing on macOS, where the system's
/// roots are also kept as a PEM bundle at `/etc/ssl/cert.pem`: that is read instead, so `pinset check` and the
/// live-chain checks validate public chains on a developer's Mac too. iOS apps pass their own roots, or evaluate
/// with Security.framework.
public enum SystemTrustRoots {
    public static var store: CertificateStore {
        #if os(macOS)
        guard let bytes = FileManager.default.contents(atPath: macOSBundlePath),
              let roots = try? PinMaterial.certificates(fromFileContents: Array(bytes), origin: macOSBundlePath)
        else { return CertificateStore() }
        return CertificateStore(roots)
        #else
        return CertificateStore.systemTrustRoots
        #endif
    }

    static let macOSBundlePath = "/etc/ssl/cert.pem"
}
