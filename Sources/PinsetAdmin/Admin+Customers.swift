import Foundation
import PinsetCore
import PinsetSigning
import PinsetStore

extension Admin {
    /// Adds a customer that signs with the deployment's default identity, or with `ownIdentity`, whose files
    /// are written into a key directory of its own first and removed again if the database change fails.
    ///
    /// - Returns: the files of the own identity, when there is one.
    @discardableResult
    public func addCustomer(_ customer: CustomerName, servesLegacyClients: Bool, ownIdentity: SigningIdentity?) throws -> CustomerIdentityFiles? {
        guard let own = ownIdentity else {
            try store.addCustomer(customer, servesLegacyClients: servesLegacyClients, actor: actor)
            return nil
        }
        do {
            try own.requireRemainingValidity(at: Date(), schedule: signingSchedule)
        } catch {
            throw AdminError("The identity of '\(customer)': \(error)")
        }
        let files = CustomerIdentityFiles(locations: dataDirectory.signingIdentityLocations, customer: customer)
        let created = try files.create(own)
        do {
            try store.addCustomer(
                customer, servesLegacyClients: servesLegacyClients,
                ownSigningIdentity: OwnSigningIdentityRecord(keyType: own.keyType.description, details: own.auditSummary), actor: actor
            )
        } catch {
            created.remove()
            throw error
        }
        return files
    }
}
