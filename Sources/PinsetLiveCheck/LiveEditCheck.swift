import Foundation
import PinsetCore
import X509

/// The rule that keeps a pin edit from locking apps out: the pins a host would have after the edit are checked
/// against the chain the host serves now, and the edit may be committed only if they match at least one of
/// its certificates — unless the host is marked unmonitored, or the check is overridden with a reason for the
/// audit log.
public enum LiveEditCheck {
    public enum Outcome: Sendable {
        /// The check was skipped on request; the reason goes to the audit log.
        case overridden(reason: String)
        /// The host is marked unmonitored: its chain is not checked.
        case unmonitored(reason: String)
        /// The chain could not be fetched or did not validate, or the address policy refused the host's addresses.
        case unreachable(endpoint: String, reason: LiveChainError)
        /// The chain was fetched and the pins compared with it.
        case checked(endpoint: String, check: LiveChainCheck)

        /// Whether the edit may be committed.
        public var permitsEdit: Bool {
            switch self {
            case .overridden, .unmonitored: true
            case .unreachable: false
            case .checked(_, let check): !check.fails
            }
        }

        /// What the edit's audit entry says about the check.
        public var auditNote: String {
            switch self {
            case .overridden(let reason):
                "live-chain check skipped with --skip-live-check: \(reason)"
            case .unmonitored(let reason):
                "live-chain check skipped: host unmonitored (\(reason))"
            case .unreachable(let endpoint, let reason):
                "live chain of \(endpoint) not checked: \(reason)"
            case .checked(let endpoint, let check):
                "live chain of \(endpoint) checked: \(check.state.rawValue) ("
                    + check.matches.filter { !$0.certificates.isEmpty }
                        .map { "\($0.pin.displayName) matches \($0.certificates.map(\.role).joined(separator: ", "))" }
                        .joined(separator: "; ")
                    + ")"
            }
        }

        /// Whether the address policy refused the host's addresses (no connection was made).
        public var isAddressRefusal: Bool {
            if case .unreachable(_, let reason) = self { reason.kind == .addressNotAllowed } else { false }
        }

        /// What a failed fetch says to an admin who is (or is not) an operator: ``LiveChainError/told(toOperator:endpoint:)``.
        public func failureText(toOperator: Bool) -> String? {
            guard case .unreachable(let endpoint, let reason) = self else { return nil }
            return reason.told(toOperator: toOperator, endpoint: endpoint)
        }
    }

    /// Checks `host` as the edit would leave it.
    ///
    /// - Parameters:
    ///   - overrideReason: skip the check, recording this reason.
    ///   - unmonitoredReason: the reason the host is marked unmonitored, if it is.
    ///   - caFile: roots to validate the chain against instead of the system's.
    ///   - connectTo: where to reach the host while sending and validating its name.
    ///   - addressPolicy: which addresses the host's name may lead to; nil for a check an admin runs on their own machine.
    ///   - timeout: the most the fetch may take, name lookup included.
    public static func run(
        _ host: HostPins, overrideReason: String?, unmonitoredReason: String?, caFile: String?, connectTo: String?,
        addressPolicy: OutboundAddressPolicy? = nil, timeout: Duration = LiveChainFetcher.defaultTimeout, now: Date = Date()
    ) async -> Outcome {
        if let overrideReason { return .overridden(reason: overrideReason) }
        if let unmonitoredReason { return .unmonitored(reason: unmonitoredReason) }
        let endpoint = "\(host.hostname.rawValue):\(host.port)"
        do {
            let chain = try await LiveChainFetcher.fetchChain(endpoint: endpoint, caFile: caFile, verify: true, connectTo: connectTo, addressPolicy: addressPolicy, timeout: timeout)
            let live = try LiveCertificate.chain(fromDER: chain.map { try PinMaterial.derBytes(of: $0) })
            return .checked(endpoint: endpoint, check: LiveChainCheck(pins: host.pins, chain: live, now: now))
        } catch let error as LiveChainError {
            return .unreachable(endpoint: endpoint, reason: error)
        } catch {
            return .unreachable(endpoint: endpoint, reason: LiveChainError("The chain \(endpoint) presented could not be read: \(error)."))
        }
    }
}
