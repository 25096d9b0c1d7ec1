/// A pin set without its hosts: which content version the customer is at and who signs it.
///
/// The store raises a customer's version with every change to its hosts or pins and never reuses one, so a
/// header that has not changed stands for content that has not changed. A server keeps the headers of the
/// last load between passes instead of the hosts and pins, which the bundles it serves already carry.
public struct PinSetHeader: Hashable, Sendable {
    public var customer: CustomerName
    /// Bumped by every change to the customer's hosts or pins; clients refuse to go back to a lower one.
    public var version: Int64
    /// Not part of the bundle; it changes without a new version.
    public var servesLegacyClients: Bool
    /// Which key signs this customer's bundles.
    public var signer: SignerAssignment
    /// The revocation floor of that signing identity (Unix seconds), published in the bundle as
    /// `signers-not-before`; `nil` when none is set.
    public var signersNotBefore: Int64?

    public init(
        customer: CustomerName, version: Int64, servesLegacyClients: Bool = false, signer: SignerAssignment = .deploymentDefault,
        signersNotBefore: Int64? = nil
    ) {
        self.customer = customer
        self.version = version
        self.servesLegacyClients = servesLegacyClients
        self.signer = signer
        self.signersNotBefore = signersNotBefore
    }

    /// Whether a bundle made for `other` must be signed again for this header: another version, signer or
    /// revocation floor. A change of `servesLegacyClients` alone is not one.
    public func differsForSigning(from other: PinSetHeader) -> Bool {
        version != other.version || signer != other.signer || signersNotBefore != other.signersNotBefore
    }
}

extension PinSet {
    public init(header: PinSetHeader, hosts: [HostPins]) {
        self.init(
            customer: header.customer, version: header.version, hosts: hosts, servesLegacyClients: header.servesLegacyClients,
            signer: header.signer, signersNotBefore: header.signersNotBefore
        )
    }

    public var header: PinSetHeader {
        PinSetHeader(customer: customer, version: version, servesLegacyClients: servesLegacyClients, signer: signer, signersNotBefore: signersNotBefore)
    }
}
