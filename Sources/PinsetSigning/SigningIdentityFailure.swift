import PinsetCore

/// Why a customer's bundle cannot be signed in this pass. The reason names the file or certificate and what
/// to do; it never contains key material.
public struct SigningIdentityFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public let customer: CustomerName
    public let signer: SignerAssignment
    public let reason: String

    public init(customer: CustomerName, signer: SignerAssignment, reason: String) {
        self.customer = customer
        self.signer = signer
        self.reason = reason
    }

    public var description: String {
        signer == .deploymentDefault
            ? "customer '\(customer)' (default signing identity): \(reason)"
            : "customer '\(customer)' (own signing identity): \(reason)"
    }
}
