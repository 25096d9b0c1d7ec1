import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// Edits other than pins, made by a named admin (the admin API): each checks the admin's role first and is audited
/// under the admin's name.
extension Admin {
    /// This library acting for `account`: what it writes is audited under the admin's name.
    func acting(as account: AdminAccount) -> Admin {
        Admin(store: store, dataDirectory: dataDirectory, actor: account.name)
    }

    /// Adds a customer, as an operator. Pin edits of a customer made this way need a second admin unless
    /// `requiresReview` is false.
    public func addCustomer(_ customer: CustomerName, servesLegacyClients: Bool, requiresReview: Bool, by account: AdminAccount) throws {
        guard account.isOperator else {
            throw AdminError("Admin \(account.name) may not add customers: only an operator may. Ask an operator, or for an operator role ('pinset admin update \(account.name) --role operator').", kind: .forbidden)
        }
        try store.addCustomer(customer, servesLegacyClients: servesLegacyClients, requiresReview: requiresReview, actor: account.name)
    }

    /// Adds a host without pins to a customer, as an editor of it: nothing is published for the host until it has
    /// pins, which are then proposed as pin edits (and reviewed where the customer requires it).
    public func addHost(_ hostname: Hostname, port: Int, includeSubdomains: Bool, to customer: CustomerName, by account: AdminAccount) throws {
        _ = try pinSet(of: customer, visibleTo: account)
        try account.require(account.mayEdit(customer), "add hosts", customer)
        guard (1...65535).contains(port) else { throw AdminError("The port \(port) is not one from 1 to 65535.") }
        if includeSubdomains {
            try IncludeSubdomainsPolicy.check(hostname)
            // Pins later approved for this host then cover every name below it, and a change request shows its
            // reviewer the pins, not this setting: on a customer that requires review, only an operator sets it.
            if try store.requiresReview(customer) && !account.isOperator {
                throw AdminError("Admin \(account.name) may not add a host with include-subdomains to '\(customer)', which requires review: the pins later approved for it would cover every subdomain, which a reviewer does not see in the request. Ask an operator to add it.", kind: .forbidden)
            }
        }
        try store.addHost(hostname, port: UInt16(port), includeSubdomains: includeSubdomains, to: customer, actor: account.name)
    }

    /// What a pin edit would do, without storing anything: the pins added and removed, and how the result fares
    /// against the host's live chain now. For an admin who may edit the customer (the check connects to the host).
    public func previewPinEdits(_ edits: [PinEdit], for customer: CustomerName, by account: AdminAccount, liveCheck: LiveCheckSettings) async throws -> [(hostname: Hostname, preview: HostEditPreview)] {
        _ = try pinSet(of: customer, visibleTo: account)
        try account.require(account.mayEdit(customer), "preview pin edits", customer)
        return try await previews(of: edits, for: customer) { _ in liveCheck }
    }

    /// Raises the revocation floor of a customer's signing identity (nil: the default identity), as an operator.
    public func raiseRevocationFloor(customer: CustomerName?, to floor: Int64?, by account: AdminAccount) throws -> RevocationFloorChange {
        guard account.isOperator else {
            throw AdminError("Admin \(account.name) may not raise revocation floors: only an operator may. Ask an operator.", kind: .forbidden)
        }
        return try acting(as: account).raiseRevocationFloor(customer: customer?.rawValue, to: floor)
    }
}
