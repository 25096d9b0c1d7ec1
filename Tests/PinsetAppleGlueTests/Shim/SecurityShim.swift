// Linux only: on Apple platforms the real frameworks exist and this target compiles to nothing.
#if PINSET_APPLE_SHIM
import Foundation

// Security.framework, as far as Pinset's Apple adapter uses it, declared with Apple's exact Swift signatures so
// that the adapter's own source (Sources/PinsetClient/Apple, linked into this target) compiles and runs on Linux.
// Each declaration cites Apple's documentation. The certificates are real DER, parsed by the code under test;
// the system evaluation is not simulated: its outcome is whatever the test says, and the shim records what the
// adapter asked for (the policy, the calls), so a test can tell glue that skips a step from glue that does not.
// Core Foundation types are the Swift types they bridge to on Apple platforms.

/// CFString bridges to String (`host as CFString` in the adapter).
public typealias CFString = String
/// CFArray of SecCertificate bridges to [SecCertificate] with `as?`.
public typealias CFArray = [Any]
/// CFData bridges to Data with `as Data`.
public typealias CFData = Data
public typealias CFTypeRef = AnyObject
public typealias CFError = NSError
public typealias OSStatus = Int32
/// https://developer.apple.com/documentation/security/errsecsuccess — `var errSecSuccess: OSStatus { get }`
public let errSecSuccess: OSStatus = 0

/// https://developer.apple.com/documentation/security/seccertificate — `class SecCertificate`
public final class SecCertificate: @unchecked Sendable {
    let der: [UInt8]
    init(der: [UInt8]) { self.der = der }
}

/// https://developer.apple.com/documentation/security/secpolicy — `class SecPolicy`
public final class SecPolicy: @unchecked Sendable {
    let server: Bool
    let hostname: String?
    init(server: Bool, hostname: String?) {
        self.server = server
        self.hostname = hostname
    }
}

/// https://developer.apple.com/documentation/security/sectrust — `class SecTrust`
///
/// Test-side state: the chain the system would build and whether it trusts it, plus a record of what the
/// adapter did. Evaluation fails unless an SSL policy for a host name was set first, as a `SecTrust` that
/// validates no host name would be worthless to pin against.
public final class SecTrust: @unchecked Sendable {
    enum Verdict { case trusted, failed(String) }

    private let lock = NSLock()
    private let evaluatedChain: [SecCertificate]
    private let verdict: Verdict
    private var _policies: [SecPolicy] = []
    private var _evaluations = 0

    init(evaluatedChain: [[UInt8]], verdict: Verdict) {
        self.evaluatedChain = evaluatedChain.map(SecCertificate.init(der:))
        self.verdict = verdict
    }

    var policies: [SecPolicy] { lock.withLock { _policies } }
    var evaluations: Int { lock.withLock { _evaluations } }

    fileprivate func setPolicies(_ policies: [SecPolicy]) { lock.withLock { _policies = policies } }

    /// Why the evaluation fails, or `nil` when the chain is trusted.
    fileprivate func evaluate() -> String? {
        lock.withLock {
            _evaluations += 1
            guard _policies.contains(where: { $0.server && $0.hostname?.isEmpty == false }) else {
                return "no SSL server policy with a host name was set"
            }
            switch verdict {
            case .trusted: return nil
            case .failed(let reason): return reason
            }
        }
    }

    fileprivate var chain: [SecCertificate] { evaluatedChain }
}

/// https://developer.apple.com/documentation/security/secpolicycreatessl(_:_:)
/// `func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy`
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(server: server, hostname: hostname)
}

/// https://developer.apple.com/documentation/security/sectrustsetpolicies(_:_:)
/// `func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus`
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    // A single policy or an array of them, as Apple accepts.
    if let policy = policies as? SecPolicy {
        trust.setPolicies([policy])
    } else if let array = policies as? [SecPolicy] {
        trust.setPolicies(array)
    } else {
        return -50  // errSecParam
    }
    return errSecSuccess
}

/// https://developer.apple.com/documentation/security/sectrustevaluatewitherror(_:_:)
/// `func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool`
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    guard let reason = trust.evaluate() else { return true }
    error?.pointee = NSError(domain: "NSOSStatusErrorDomain", code: -67843, userInfo: [NSLocalizedDescriptionKey: reason])
    return false
}

/// https://developer.apple.com/documentation/security/sectrustcopycertificatechain(_:)
/// `func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray?` (iOS 15, macOS 12)
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    trust.chain.isEmpty ? nil : trust.chain
}

/// https://developer.apple.com/documentation/security/seccertificatecopydata(_:)
/// `func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData`
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    Data(certificate.der)
}
#endif
