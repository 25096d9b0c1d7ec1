// Apple platforms only. On Linux the test target PinsetAppleGlueTests compiles this very file against
// declarations with Apple's exact signatures (PINSET_APPLE_SHIM), so that its paths run in tests.
#if (canImport(Security) && !PINSET_APPLE_GLUE_TARGET) || PINSET_APPLE_SHIM
import Foundation
#if canImport(Security)
import Security
#endif
#if PINSET_APPLE_SHIM
import PinsetClient
#endif

/// The one place Pinset reads a `SecTrust`: the system evaluation for the host, then the pins.
///
/// It sets the SSL policy for exactly the host the app connects to (`SecPolicyCreateSSL(true, host)`), runs
/// the system evaluation (`SecTrustEvaluateWithError`; never the deprecated `SecTrustEvaluate`), takes the chain
/// the evaluation built (`SecTrustCopyCertificateChain`, iOS 15 / macOS 12), and hands its DER certificates to
/// `PinEvaluator.decide(host:systemEvaluation:)`, where every decision is made. Anything missing fails closed.
///
/// Thread-safe: stateless; the pin evaluator is.
public enum PinsetSecTrust {
    /// Evaluates `trust` for a connection to `host`: first as the system does, then against the pins held.
    public static func evaluate(_ trust: SecTrust, host: String, pins: PinEvaluator) -> PlatformTrustDecision {
        pins.decide(host: host, systemEvaluation: systemEvaluation(of: trust, host: host))
    }

    /// The chain the system validated for `host`, leaf first, as DER; or why there is none.
    static func systemEvaluation(of trust: SecTrust, host: String) -> Result<[[UInt8]], PlatformTrustError> {
        guard !host.isEmpty else { return .failure(PlatformTrustError("no host name to validate the certificate for")) }
        // The trust object's own policy may be a plain X.509 one (Network.framework, some delegates): host-name
        // validation is only certain when set here.
        let policy = SecPolicyCreateSSL(true, host as CFString)
        let status = SecTrustSetPolicies(trust, policy)
        guard status == errSecSuccess else {
            return .failure(PlatformTrustError("the SSL policy for '\(host)' could not be set (OSStatus \(status))"))
        }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error) else {
            return .failure(PlatformTrustError(error.map { "\($0)" } ?? "the system evaluation failed without a reason"))
        }
        guard let certificates = SecTrustCopyCertificateChain(trust) as? [SecCertificate], !certificates.isEmpty else {
            return .failure(PlatformTrustError("the evaluated trust holds no certificate chain"))
        }
        return .success(certificates.map { [UInt8](SecCertificateCopyData($0) as Data) })
    }
}
#endif
