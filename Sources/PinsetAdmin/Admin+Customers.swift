import Foundation
import PinsetCore
import PinsetSigning
import PinsetStore

extension Admin {
    /// Adds a customer, as an operator. It signs with the deployment's default identity, or with `ownIdentity`,
    /// whose files are written into a key directory of its own first and removed again if the database change fails
    /// (the local operator's only: a key made elsewhere never travels to the server). Its pin edits need a second
    /// admin when `requiresReview`; by default they do for a customer a named admin adds, and not for one the local
    /// operator adds (which turns review on with 'pinset admin require-review').
    ///
    /// - Returns: the files of the own identity, when there is one.
    @discardableResult
    public func addCustomer(
        _ customer: CustomerName, servesLegacyClients: Bool, requiresReview: Bool? = nil, ownIdentity: SigningIdentity? = nil, by principal: AdminPrincipal
    ) throws -> CustomerIdentityFiles? {
        try requireOperator(principal, "add customers")
        let requiresReview = requiresReview ?? (principal.account != nil)
        let actor = principal.actor
        guard let own = ownIdentity else {
            try store.addCustomer(customer, servesLegacyClients: servesLegacyClients, requiresReview: requiresReview, actor: actor)
            return nil
        }
        if let account = principal.account {
            throw AdminError("Admin \(account.name) gives '\(customer)' its own key with 'customer identity rotate': a key is made on the server, never sent to it.", kind: .forbidden)
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
                ownSigningIdentity: OwnSigningIdentityRecord(keyType: own.keyType.description, details: own.auditSummary), requiresReview: requiresReview,
                actor: actor
            )
        } catch {
            created.remove()
            throw error
        }
        return files
    }
}

extension Admin {
    /// Creates customers with their hosts and pins in one transaction, as an operator: what `pinset import signer-py`
    /// writes, and how the benchmarks fill a database. The rules of adding them one by one apply: a host with
    /// include-subdomains must not cover a public suffix, and the store refuses a customer that exists, a host listed
    /// twice, a port 0 and a pin without hashes; nothing is created when anything is refused.
    public func importCustomers(_ imports: [CustomerImport], by principal: AdminPrincipal) throws {
        try requireOperator(principal, "add customers")
        for host in imports.flatMap(\.hosts) {
            try Self.checkNewHostName(host.hostname)
            if host.includeSubdomains { try checkIncludeSubdomains(host.hostname) }
        }
        try store.importCustomers(imports, actor: principal.actor)
    }
}
