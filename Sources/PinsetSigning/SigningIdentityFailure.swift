import PinsetCore

/// Why a customer's bundle cannot be signed in this pass. The reason names the file or certificate and what
/// to do; it never contains key material.
public struct SigningIdentityFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What stands in the way.
    public enum Kind: Hashable, Sendable {
        /// The signing identity: a key or certificate missing, too open, or outside its validity.
        case identity
        /// The customer's content version lies further ahead of the signing time than clients accept
        /// (`BundleBounds.maximumVersionLead`): a clock problem, not a key problem.
        case versionAheadOfClock
        /// The store holds an older content version than the bundle served: the database went back in time (an older
        /// copy put in place, a snapshot or point-in-time restore, a failover to a standby that missed commits).
        case versionBehindServed
    }

    public let customer: CustomerName
    public let signer: SignerAssignment
    public let reason: String
    public let kind: Kind

    public init(customer: CustomerName, signer: SignerAssignment, reason: String, kind: Kind = .identity) {
        self.customer = customer
        self.signer = signer
        self.reason = reason
        self.kind = kind
    }

    public var description: String {
        signer == .deploymentDefault
            ? "customer '\(customer)' (default signing identity): \(reason)"
            : "customer '\(customer)' (own signing identity): \(reason)"
    }
}
