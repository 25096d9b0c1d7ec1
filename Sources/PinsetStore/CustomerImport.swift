import PinsetCore

/// A whole customer to create in one go: hosts with their pins and, optionally, its own signing identity.
public struct CustomerImport: Hashable, Sendable {
    public var name: CustomerName
    public var hosts: [HostPins]
    /// `nil`: the deployment's default key signs it.
    public var ownSigningIdentity: OwnSigningIdentityRecord?
    /// For the audit entry: where the data came from.
    public var origin: String
    /// Whether the customer's apps include legacy GCX clients (see `PinStore.setServesLegacyClients`).
    public var servesLegacyClients: Bool

    public init(
        name: CustomerName, hosts: [HostPins], ownSigningIdentity: OwnSigningIdentityRecord?, origin: String,
        servesLegacyClients: Bool = false
    ) {
        self.name = name
        self.hosts = hosts
        self.ownSigningIdentity = ownSigningIdentity
        self.origin = origin
        self.servesLegacyClients = servesLegacyClients
    }
}
