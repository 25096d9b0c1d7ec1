import Foundation
import SwiftASN1
import X509

/// The operating system's root certificates, for validating a TLS server's chain before any pin check.
///
/// On Linux, swift-certificates reads the distribution's CA file. It reads nothing on macOS, where the system's
/// roots are also kept as a PEM bundle at `/etc/ssl/cert.pem`: that is read instead (once), so `pinset check` and
/// the live-chain checks validate public chains on a developer's Mac too. iOS apps pass their own roots, or
/// evaluate with Security.framework.
public enum SystemTrustRoots {
    public static var store: CertificateStore {
        #if os(macOS)
        macOSStore
        #else
        CertificateStore.systemTrustRoots
        #endif
    }

    #if os(macOS)
    private static let macOSStore = CertificateStore(certificates(inBundle: macOSBundlePath))
    #endif

    static let macOSBundlePath = "/etc/ssl/cert.pem"

    /// Each certificate of a PEM bundle that parses; one that does not is left out rather than costing the others.
    static func certificates(inBundle path: String) -> [Certificate] {
        guard let bytes = FileManager.default.contents(atPath: path),
              let documents = try? PEMDocument.parseMultiple(pemString: String(decoding: bytes, as: UTF8.self))
        else { return [] }
        return documents.filter { $0.discriminator == "CERTIFICATE" }.compactMap { try? Certificate(pemDocument: $0) }
    }
}
