import Foundation
import PinsetCore

/// One line of `pinset customer list`: a customer with its content version and counts.
public struct CustomerSummary: Hashable, Sendable {
    public var name: CustomerName
    /// The content version the customer's next bundle carries.
    public var version: Int64
    public var hostCount: Int
    public var pinCount: Int
    /// Pin edits that leave a host with fewer than two pins legacy GCX clients can use are refused.
    public var servesLegacyClients: Bool
    public var createdAt: Date
    /// When the customer, one of its hosts or one of its pins last changed.
    public var updatedAt: Date

    public init(name: CustomerName, version: Int64, hostCount: Int, pinCount: Int, servesLegacyClients: Bool = false, createdAt: Date, updatedAt: Date) {
        self.name = name
        self.version = version
        self.hostCount = hostCount
        self.pinCount = pinCount
        self.servesLegacyClients = servesLegacyClients
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
