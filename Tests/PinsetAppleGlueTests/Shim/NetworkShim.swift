// Linux only: on Apple platforms the real frameworks exist and this target compiles to nothing.
#if PINSET_APPLE_SHIM
import Dispatch
import Foundation

// Network.framework and the Security protocol types its TLS options use, with Apple's exact Swift signatures
// (see SecurityShim.swift for why). The shim keeps the verify block the adapter installs so that a test can
// run it as the framework would — on the given queue, once or several times per connection.

/// https://developer.apple.com/documentation/security/sec_protocol_metadata_t — `typealias sec_protocol_metadata_t = any OS_sec_protocol_metadata`
public final class sec_protocol_metadata_t: @unchecked Sendable {
    public init() {}
}

/// https://developer.apple.com/documentation/security/sec_trust_t — `typealias sec_trust_t = any OS_sec_trust`
public final class sec_trust_t: @unchecked Sendable {
    let trust: SecTrust
    public init(_ trust: SecTrust) { self.trust = trust }
}

/// https://developer.apple.com/documentation/security/sec_protocol_verify_complete_t
/// `typealias sec_protocol_verify_complete_t = (Bool) -> Void`
public typealias sec_protocol_verify_complete_t = (Bool) -> Void

/// https://developer.apple.com/documentation/security/sec_protocol_verify_t
/// `typealias sec_protocol_verify_t = (sec_protocol_metadata_t, sec_trust_t, @escaping sec_protocol_verify_complete_t) -> Void`
public typealias sec_protocol_verify_t = (sec_protocol_metadata_t, sec_trust_t, @escaping sec_protocol_verify_complete_t) -> Void

/// https://developer.apple.com/documentation/security/sec_protocol_options_t — `typealias sec_protocol_options_t = any OS_sec_protocol_options`
public final class sec_protocol_options_t: @unchecked Sendable {
    private let lock = NSLock()
    private var installed: (block: sec_protocol_verify_t, queue: DispatchQueue)?

    fileprivate func install(_ block: @escaping sec_protocol_verify_t, on queue: DispatchQueue) {
        lock.withLock { installed = (block, queue) }
    }

    /// Runs the installed verify block as the framework does during a handshake, and returns what it completed
    /// with; `nil` when no block was installed or it never completed.
    public func runVerification(of trust: SecTrust) -> Bool? {
        guard let (block, queue) = lock.withLock({ installed }) else { return nil }
        let result = VerificationResult()
        queue.sync {
            block(sec_protocol_metadata_t(), sec_trust_t(trust)) { verdict in result.set(verdict) }
        }
        return result.value
    }
}

private final class VerificationResult: @unchecked Sendable {
    private let lock = NSLock()
    private var verdict: Bool?
    func set(_ value: Bool) { lock.withLock { verdict = value } }
    var value: Bool? { lock.withLock { verdict } }
}

/// https://developer.apple.com/documentation/security/sec_protocol_options_set_verify_block(_:_:_:)
/// `func sec_protocol_options_set_verify_block(_ options: sec_protocol_options_t, _ verify_block: @escaping sec_protocol_verify_t, _ verify_block_queue: dispatch_queue_t)`
/// (`dispatch_queue_t` is `DispatchQueue` in Swift.)
public func sec_protocol_options_set_verify_block(_ options: sec_protocol_options_t, _ verify_block: @escaping sec_protocol_verify_t, _ verify_block_queue: DispatchQueue) {
    options.install(verify_block, on: verify_block_queue)
}

/// https://developer.apple.com/documentation/security/sec_trust_copy_ref(_:)
/// `func sec_trust_copy_ref(_ trust: sec_trust_t) -> Unmanaged<SecTrust>` (a +1 reference: `takeRetainedValue()`)
public func sec_trust_copy_ref(_ trust: sec_trust_t) -> Unmanaged<SecTrust> {
    Unmanaged.passRetained(trust.trust)
}

/// https://developer.apple.com/documentation/network/nwprotocoltls — `class NWProtocolTLS`
public final class NWProtocolTLS {
    /// https://developer.apple.com/documentation/network/nwprotocoltls/options — `class Options`; `init()`;
    /// `var securityProtocolOptions: sec_protocol_options_t { get }`
    public final class Options {
        public let securityProtocolOptions = sec_protocol_options_t()
        public init() {}
    }
}
#endif
