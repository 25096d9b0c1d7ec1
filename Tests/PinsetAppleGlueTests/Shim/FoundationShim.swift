// Linux only: on Apple platforms the real frameworks exist and this target compiles to nothing.
#if PINSET_APPLE_SHIM
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The Foundation members that exist only on Apple platforms because they carry a SecTrust, with Apple's exact
// Swift signatures (see SecurityShim.swift for why).

/// https://developer.apple.com/documentation/foundation/nsurlauthenticationmethodservertrust
/// `let NSURLAuthenticationMethodServerTrust: String` (declared but unavailable in swift-corelibs-foundation).
public let NSURLAuthenticationMethodServerTrust: String = "NSURLAuthenticationMethodServerTrust"

/// The protection space of a server-trust challenge, as URLSession makes one for an HTTPS connection.
final class ServerTrustProtectionSpace: URLProtectionSpace, @unchecked Sendable {
    let trust: SecTrust?

    init(host: String, trust: SecTrust?) {
        self.trust = trust
        super.init(host: host, port: 443, protocol: "https", realm: nil, authenticationMethod: NSURLAuthenticationMethodServerTrust)
    }

    required init?(coder aDecoder: NSCoder) { nil }
}

extension URLProtectionSpace {
    /// https://developer.apple.com/documentation/foundation/urlprotectionspace/servertrust — `var serverTrust: SecTrust? { get }`
    public var serverTrust: SecTrust? { (self as? ServerTrustProtectionSpace)?.trust }
}

/// Which trust each credential made by `URLCredential(trust:)` stands for, so a test can check it.
enum TrustCredentials {
    nonisolated(unsafe) private static var trusts: [ObjectIdentifier: SecTrust] = [:]
    private static let lock = NSLock()

    static func record(_ credential: URLCredential, _ trust: SecTrust) {
        lock.withLock { trusts[ObjectIdentifier(credential)] = trust }
    }

    static func trust(of credential: URLCredential) -> SecTrust? {
        lock.withLock { trusts[ObjectIdentifier(credential)] }
    }
}

extension URLCredential {
    /// https://developer.apple.com/documentation/foundation/urlcredential/init(trust:) — `init(trust: SecTrust)`
    public convenience init(trust: SecTrust) {
        self.init(user: "", password: "", persistence: .none)
        TrustCredentials.record(self, trust)
    }
}
#endif
