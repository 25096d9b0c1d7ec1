import Foundation
import PinsetCore
import PinsetSigning
import PinsetStore

/// Which identity signs a customer's bundles, and whether it can sign now — decided as the server decides.
public struct CustomerIdentityReport: Sendable {
    public var customer: CustomerName
    public var signer: SignerAssignment
    public var keyFile: String
    public var certificateFile: String
    /// The key type recorded for an own identity.
    public var recordedKeyType: String?
    /// The identity, when it can sign now.
    public var identity: SigningIdentity?
    /// Why it cannot sign now.
    public var problem: String?
    public var warnings: [String]
}

extension Admin {
    public func customerIdentity(of name: CustomerName, now: Date = Date()) throws -> CustomerIdentityReport {
        let (customer, signer, keyType) = try store.signerAssignment(of: name)
        let locations = dataDirectory.signingIdentityLocations
        // Usable means what the server decides: below the floor it does not sign.
        let floor = try store.signersNotBefore(of: signer == .customerOwn ? customer : nil)
        let lookup = SigningIdentityDirectory(locations: locations)
            .identity(for: customer, signer: signer, now: now, bundleExpires: now, signersNotBefore: floor)
        var report = switch signer {
        case .deploymentDefault:
            CustomerIdentityReport(
                customer: customer, signer: signer, keyFile: locations.defaultKeyPath,
                certificateFile: locations.defaultCertificatePath, warnings: []
            )
        case .customerOwn:
            CustomerIdentityReport(
                customer: customer, signer: signer, keyFile: locations.keyPath(of: customer),
                certificateFile: locations.certificatePEMPath(of: customer), recordedKeyType: keyType ?? "-", warnings: []
            )
        }
        switch lookup {
        case .success(let identity):
            report.identity = identity
            report.warnings = identity.expiryWarnings(at: now)
        case .failure(let failure):
            report.problem = failure.reason
        }
        return report
    }

    /// Gives a customer a new own key and certificate. Four rules hold: the new certificate chains to the
    /// anchor the customer's apps embed (unless `replaceTrustAnchor`); it is not below the revocation floor its
    /// apps hold; the files are in place before the database records the change (so the pass it triggers
    /// finds the new key); and a failed database change puts the previous files back.
    ///
    /// The local operator's only: an identity made elsewhere, imported or generated on this host. A named admin's
    /// new key is made where this library runs (``rotateCustomerIdentity(of:keyType:commonName:validityDays:replaceTrustAnchor:by:)``).
    ///
    /// - Returns: the customer's stored name.
    @discardableResult
    public func rotateCustomerIdentity(
        of name: CustomerName, to new: SigningIdentity, replaceTrustAnchor: Bool, by principal: AdminPrincipal, now: Date = Date()
    ) throws -> CustomerName {
        if let account = principal.account {
            throw AdminError("Admin \(account.name) gives '\(name)' a new key with 'customer identity rotate --key-type': a key is made on the server, never sent to it.", kind: .forbidden)
        }
        return try installIdentity(of: name, new, replaceTrustAnchor: replaceTrustAnchor, actor: principal.actor, now: now)
    }

    func installIdentity(of name: CustomerName, _ new: SigningIdentity, replaceTrustAnchor: Bool, actor: String, now: Date = Date()) throws -> CustomerName {
        let (customer, signer, _) = try store.signerAssignment(of: name)
        do {
            try new.requireRemainingValidity(at: now, schedule: signingSchedule)
        } catch {
            throw AdminError("The new identity of '\(customer)': \(error)")
        }
        let locations = dataDirectory.signingIdentityLocations
        let current = SigningIdentityDirectory(locations: locations).identity(for: customer, signer: signer, now: now, bundleExpires: now)
        let sameAnchor = (try? current.get().anchorDER) == new.anchorDER
        if !sameAnchor && !replaceTrustAnchor {
            throw AdminError("The new certificate does not chain to the trust anchor that the apps of '\(customer)' embed now, so they would reject every new bundle. Ship the new certificate (base64 DER below) in the apps first, then run again with --replace-trust-anchor.\n\(Base64.encode(new.anchorDER))")
        }
        // The customer's apps keep the floor of the identity that signed for them so far (the default one's
        // until its first own identity): a certificate older than it would sign bundles they refuse.
        if let problem = new.revocationFloorProblem(try store.signersNotBefore(of: signer == .customerOwn ? customer : nil)) {
            throw AdminError("The new identity of '\(customer)': \(problem) Nothing was changed.")
        }
        try CustomerIdentityFiles(locations: locations, customer: customer).replace(with: new) {
            try store.setOwnSigningIdentity(
                of: customer, OwnSigningIdentityRecord(keyType: new.keyType.description, details: new.auditSummary), actor: actor
            )
        }
        return customer
    }
}
