import Foundation
import PinsetCore
import X509

/// Decides whether a TLS server may be trusted: normal validation first, then the pins.
///
/// Normal validation is RFC 5280 path building to `trustRoots` at the current time, plus RFC 6125 host name
/// (or IP address) matching of the leaf. Only if that succeeds are the pins checked, and against the chain
/// that path building produced — not against the certificates the peer merely sent, which may include any
/// public certificate an attacker chose to append. Portable: swift-certificates and swift-crypto only.
///
/// Thread-safe: a value over a `PinEvaluator` (lock-protected) and an immutable root store.
public struct ServerTrustEvaluator: Sendable {
    public let pins: PinEvaluator
    public let trustRoots: TLSTrustRoots

    public init(pins: PinEvaluator, trustRoots: TLSTrustRoots) {
        self.pins = pins
        self.trustRoots = trustRoots
    }

    /// Evaluates the chain a server presented (DER, leaf first) for a connection to `serverHostname`, which
    /// may be a DNS name or an IP address literal.
    ///
    /// - Returns: the validated chain (leaf to root, DER) and the pin verdict, or the reason for refusal.
    public func evaluate(
        serverHostname: String,
        presentedChain: [[UInt8]]
    ) async -> Result<(validatedChain: [[UInt8]], evaluation: PinEvaluation), ServerTrustError> {
        guard let leafBytes = presentedChain.first else {
            return .failure(ServerTrustError(.chainValidation, "the server presented no certificate"))
        }
        guard presentedChain.count <= PresentedChain.maximumCertificates else {
            return .failure(ServerTrustError(.chainValidation, "the server presented \(presentedChain.count) certificates; at most \(PresentedChain.maximumCertificates) are evaluated"))
        }
        let leaf: Certificate
        var intermediates: [Certificate] = []
        do {
            leaf = try Certificate(derEncoded: leafBytes)
            for der in presentedChain.dropFirst() {
                intermediates.append(try Certificate(derEncoded: der))
            }
        } catch {
            return .failure(ServerTrustError(.chainValidation, "the server presented a certificate that does not parse: \(error)"))
        }
        let isIPAddress = Self.isIPAddress(serverHostname)
        var verifier = Verifier(rootCertificates: trustRoots.store) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIPAddress ? nil : serverHostname, serverIP: isIPAddress ? serverHostname : nil)
        }
        let validated: [Certificate]
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates)) {
        case .validCertificate(let chain):
            validated = Array(chain)
        case .couldNotValidate(let failures):
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            return .failure(ServerTrustError(.chainValidation, reasons.isEmpty ? "no chain to a trust root" : reasons.joined(separator: "; ")))
        }
        let chain: [[UInt8]]
        do {
            chain = try validated.map { try PinMaterial.derBytes(of: $0) }
        } catch {
            return .failure(ServerTrustError(.chainValidation, "the validated chain could not be encoded: \(error)"))
        }
        let evaluation = pins.evaluate(host: serverHostname, chain: chain)
        switch evaluation {
        case .pinnedMatch, .notPinned, .reportOnlyMismatch:
            return .success((chain, evaluation))
        case .pinMismatch, .pinlessEntryRefused:
            return .failure(ServerTrustError(.pinMismatch, evaluation.description, evaluation: evaluation))
        case .unpinnedHostRefused:
            return .failure(ServerTrustError(.unpinnedHostRefused, evaluation.description, evaluation: evaluation))
        }
    }

    static func isIPAddress(_ text: String) -> Bool {
        if text.contains(":") { return true }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
