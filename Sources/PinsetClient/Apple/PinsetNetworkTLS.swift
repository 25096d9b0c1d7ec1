// Apple platforms only; compiled on Linux by PinsetAppleGlueTests against Apple's exact signatures (and not
// compiled in that target on Apple platforms, where PinsetClient has it).
#if ((canImport(Security) && canImport(Network)) && !PINSET_APPLE_GLUE_TARGET) || PINSET_APPLE_SHIM
import Dispatch
import Foundation
#if canImport(Network)
import Network
#endif
#if canImport(Security)
import Security
#endif
#if PINSET_APPLE_SHIM
import PinsetClient
#endif

extension PinsetSecTrust {
    /// TLS options for a Network.framework connection (`NWConnection`, `NWParameters(tls:)`) to `host`: the
    /// system evaluation for `host`, then the pins, through `sec_protocol_options_set_verify_block`.
    ///
    /// The verify block may run more than once per connection; each run evaluates afresh, against the pins in
    /// force at that moment, and a mismatch is reported each time (the reporter sends one per host and interval).
    ///
    /// - Parameters:
    ///   - host: the host name the app connects to, which the leaf must be valid for (the connection's endpoint).
    ///   - queue: where the verify block runs; evaluation is synchronous and short.
    public static func tlsOptions(host: String, pins: PinEvaluator, queue: DispatchQueue = DispatchQueue(label: "pinset.tls-verify")) -> NWProtocolTLS.Options {
        let options = NWProtocolTLS.Options()
        sec_protocol_options_set_verify_block(options.securityProtocolOptions, { _, secTrust, complete in
            let trust = sec_trust_copy_ref(secTrust).takeRetainedValue()
            complete(evaluate(trust, host: host, pins: pins).allowsConnection)
        }, queue)
        return options
    }
}
#endif
