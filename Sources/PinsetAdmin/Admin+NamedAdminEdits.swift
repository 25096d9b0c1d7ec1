import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetSigning
import PinsetStore

/// Edits other than pins, made by a named admin (the admin API): each checks the admin's role first and is audited
/// under the admin's name.
extension Admin {
    /// Adds a host without pins to a customer, as an editor of it: nothing is published for the host until it has
    /// pins, which are then proposed as pin edits (and reviewed where the customer requires it).
    public func addHost(_ hostname: Hostname, port: Int, includeSubdomains: Bool, to customer: CustomerName, by account: AdminAccount) throws {
        try addHost(hostname, port: port, includeSubdomains: includeSubdomains, to: customer, by: .admin(account))
    }

    /// What a pin edit would do, without storing anything: the pins added and removed, and how the result fares
    /// against the host's live chain now. For an admin who may edit the customer (the check connects to the host,
    /// charged to the admin's budget unless a recent check of the same result is reused).
    ///
    /// - Throws: `AdminError` when the address policy refuses where a host's name leads: the dry run made no
    ///   connection and cannot say anything about the chain.
    public func previewPinEdits(_ edits: [PinEdit], for customer: CustomerName, by account: AdminAccount, liveCheck: LiveCheckSettings) async throws -> [(hostname: Hostname, preview: HostEditPreview)] {
        _ = try pinSet(of: customer, visibleTo: account)
        try account.require(account.mayEdit(customer), "preview pin edits", customer)
        let settings = liveCheck.started(by: account)
        let previews = try await previews(of: edits, for: customer) { _ in settings }
        for (hostname, preview) in previews {
            if case .unreachable(let endpoint, let reason) = preview.outcome, reason.kind == .addressNotAllowed {
                throw AdminError("Refused: the dry run of \(hostname) was not checked. \(reason.told(toOperator: settings.toldInFull, endpoint: endpoint))")
            }
        }
        return previews
    }
}

/// Settings and removals of customers and hosts, and next keys, made by a named admin.
extension Admin {
    /// Changes a customer's settings, as an operator: whether its apps include legacy GCX clients, and whether
    /// its pin edits need a second admin. Returns whether anything changed.
    public func updateCustomer(_ customer: CustomerName, servesLegacyClients: Bool?, requiresReview: Bool?, by account: AdminAccount) throws -> Bool {
        try updateCustomer(customer, servesLegacyClients: servesLegacyClients, requiresReview: requiresReview, by: .admin(account))
    }

    /// Removes a customer with its hosts and pins, as an operator. Returns the signer it had: an own key stays in
    /// the data directory, since apps may still trust it.
    public func removeCustomer(_ customer: CustomerName, by account: AdminAccount) throws -> SignerAssignment {
        try removeCustomer(customer, by: .admin(account)).signer
    }

    /// Changes a host's port or include-subdomains setting, as an editor, after the live-chain check of the host
    /// with the new settings; or marks it unmonitored (`unmonitored`, with the reason) or monitored again
    /// (`monitored`). On a customer that requires review, only marking it monitored (more checks, never fewer) is
    /// an editor's: the rest changes what apps enforce, or what a reviewer's live check shows, unreviewed.
    /// Returns whether anything changed.
    public func updateHost(
        _ hostname: Hostname, of customer: CustomerName, port: Int?, includeSubdomains: Bool?, unmonitored: String?, monitored: Bool,
        by account: AdminAccount, liveCheck: LiveCheckSettings
    ) async throws -> Bool {
        _ = try pinSet(of: customer, visibleTo: account)
        try account.require(account.mayEdit(customer), "update hosts", customer)
        guard port != nil || includeSubdomains != nil || unmonitored != nil || monitored else {
            throw AdminError("The update changes nothing: give 'port', 'includeSubdomains', 'unmonitored' (a reason) or 'monitored'.")
        }
        if unmonitored != nil && monitored { throw AdminError("Give 'unmonitored' (a reason) or 'monitored', not both.") }
        // Whether the new settings are checked against the live chain depends on the monitoring, so a request
        // changes one or the other, and is applied whole or not at all.
        if (unmonitored != nil || monitored) && (port != nil || includeSubdomains != nil) {
            throw AdminError("Change the monitoring and the port or include-subdomains setting in two requests: whether the new settings are checked against the live chain depends on the monitoring. Nothing was changed.")
        }
        if let port { try Self.checkPort(port) }
        if includeSubdomains == true { try checkIncludeSubdomains(hostname) }
        if unmonitored != nil || monitored {
            return try setUnmonitored(hostname, of: customer, reason: unmonitored, by: .admin(account))
        }
        // Refused before the check connects out, rather than after.
        try requireOperatorWhereReviewed(customer, .admin(account), "change the settings of \(hostname)", because: Self.hostSettingsNeedReview)
        let newPort = port.map { UInt16($0) }
        let checked = try await liveChainGuard(for: hostname, of: customer, settings: liveCheck.started(by: account)).check { current in
            HostEdit.settings(of: current, port: newPort, includeSubdomains: includeSubdomains)
        }
        guard let checked else {
            throw AdminError.noHost(hostname, of: customer)
        }
        // The check waited on the network: the admin's roles and the customer's review rule are read again.
        let current = try requireStill(account) { current in
            try current.require(current.mayEdit(customer), "update hosts", customer)
            try requireOperatorWhereReviewed(customer, .admin(current), "change the settings of \(hostname)", because: "review was turned on while the live chain was checked")
        }
        return try updateHost(hostname, of: customer, port: port, includeSubdomains: includeSubdomains, checked: checked, by: .admin(current))
    }

    /// Removes a host and its pins, as an editor; on a customer that requires review, as an operator, since apps
    /// then stop pinning the host at all without a reviewer having seen it.
    public func removeHost(_ hostname: Hostname, from customer: CustomerName, allowLastHost: Bool, by account: AdminAccount) throws {
        try removeHost(hostname, from: customer, allowLastHost: allowLastHost, by: .admin(account))
    }

    /// Runs `check` on `account` as the store has it now: disabled, removed or with other roles since it
    /// authenticated, the admin is judged by what it is now. Returns the admin as it is now.
    @discardableResult
    func requireStill(_ account: AdminAccount, _ check: (AdminAccount) throws -> Void) throws -> AdminAccount {
        // A conflict with a change made meanwhile (409), as the store's own check inside a write answers it.
        guard let current = try store.admins().first(where: { $0.name == account.name }), !current.isDisabled else {
            throw AdminError("Admin \(account.name) was disabled or removed while the live chain was checked. Nothing was changed.", code: .notPermittedAnyMore)
        }
        do {
            try check(current)
        } catch let refusal as AdminError where refusal.kind == .forbidden {
            throw AdminError("Changed while the live chain was checked, and nothing was changed: \(refusal.description)", code: .notPermittedAnyMore)
        }
        return current
    }
}

extension HostEdit {
    /// A host with a new port and include-subdomains setting, and the edit that says so; nil keeps a setting.
    public static func settings(of current: HostPins, port: UInt16?, includeSubdomains: Bool?) -> (result: HostPins, edit: HostEdit) {
        var result = current
        var edit = HostEdit()
        if let port, port != current.port {
            result.port = port
            edit.newPort = port
        }
        if let includeSubdomains, includeSubdomains != current.includeSubdomains {
            result.includeSubdomains = includeSubdomains
            edit.other.append("include-subdomains \(includeSubdomains ? "on" : "off")")
        }
        return (result, edit)
    }
}

/// A customer's signing identity, for a named admin.
extension Admin {
    /// Which identity signs the customer's bundles and whether it can sign now, for a viewer of the customer.
    public func customerIdentity(of customer: CustomerName, visibleTo viewer: AdminAccount, now: Date = Date()) throws -> CustomerIdentityReport {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try customerIdentity(of: customer, now: now)
    }

    /// Gives a customer a new own key of `keyType` and a self-signed certificate, as an operator, under the rules
    /// of ``rotateCustomerIdentity(of:to:replaceTrustAnchor:by:now:)``. The key is made where this library runs (the
    /// server, for a named admin) and never leaves it; the new certificate is returned for the apps to embed.
    ///
    /// A new self-signed certificate is a new trust anchor. Without `replaceTrustAnchor` the key is made and kept
    /// pending (``PendingCustomerIdentity``), and the refusal carries its certificate for the apps; the next call
    /// with `replaceTrustAnchor` installs that same key, so the certificate shipped is the one that signs. With
    /// `replaceTrustAnchor` and nothing pending it is refused: a retried call must never install a key nobody was
    /// shown in place of the one just installed.
    public func rotateCustomerIdentity(
        of customer: CustomerName, keyType: SigningKeyType, commonName: String?, validityDays: Int, replaceTrustAnchor: Bool, by principal: AdminPrincipal
    ) throws -> SigningIdentity {
        try requireOperator(principal, of: customer, "replace the signing identity of '\(customer)'")
        let shortest = signingSchedule.minimumValidityDays
        let longest = AdminLimits.identityValidityDays.upperBound
        guard (shortest...longest).contains(validityDays) else {
            throw InputError("The validity must be at least \(shortest) days and at most \(longest), not \(validityDays): an identity must stay valid for at least \(signingSchedule.minimumDescription), or the server stops signing with it before its bundles expire.")
        }
        let commonName = commonName ?? customer.rawValue
        let (stored, _, _) = try store.signerAssignment(of: customer)
        let pending = PendingCustomerIdentity(locations: dataDirectory.signingIdentityLocations, customer: stored)
        let waiting = try pending.load()
        // A pending key is never replaced by another call: its certificate may ship in apps already.
        func otherKeyPending(_ waiting: SigningIdentity) -> AdminError {
            AdminError("A pending \(waiting.keyType) key of '\(stored)' waits in '\(stored)/pending/' of the customer key directory (\(waiting.auditSummary)): the apps may embed its certificate already. Give --key-type \(waiting.keyType) to see its certificate again or to install it, or move that directory away to make a new \(keyType) key. Nothing was changed.")
        }
        if let waiting, waiting.keyType != keyType { throw otherKeyPending(waiting) }
        if replaceTrustAnchor {
            if let waiting {
                _ = try installIdentity(of: stored, waiting, replaceTrustAnchor: true, actor: principal.actor)
                pending.remove()
                return waiting
            }
            // Nothing pending: the certificate to install was never shown to anyone, and a retried call would
            // install yet another key in place of the one just installed (and maybe shipped).
            throw AdminError("No key of '\(stored)' is pending, so there is no certificate the apps could embed yet. Run the same command without --replace-trust-anchor first: it makes the key and shows its certificate; ship that, then run this one, which installs exactly that key. Nothing was changed.", code: .trustAnchorPending)
        }
        let identity: SigningIdentity
        if let waiting {
            if let problem = pendingProblem(waiting, of: stored) {
                throw AdminError("The pending key of '\(stored)' ('\(stored)/pending/' in the customer key directory) can no longer sign: \(problem) Move that directory away and run the command again for a new key (apps need its certificate instead). Nothing was changed.")
            }
            identity = waiting
        } else {
            identity = try pending.save(try SigningIdentity.generate(keyType: keyType, commonName: commonName, validityDays: validityDays))
            // Another call saved its key first: that one is pending, whatever type it is.
            if identity.keyType != keyType { throw otherKeyPending(identity) }
        }
        throw AdminError(lines: [
            "A new key comes with its own self-signed certificate, a new trust anchor that the apps of '\(stored)' do not embed yet: they would reject every bundle signed with it. The key is kept pending ('\(stored)/pending/' in the customer key directory) and signs nothing yet. Ship this certificate (base64 DER below) in the apps beside the one they embed now; once they have it, run the same command with --replace-trust-anchor to switch to exactly this key.",
            Base64.encode(identity.anchorDER),
        ], code: .trustAnchorPending)
    }

    /// Why a pending identity could not be installed now, if it could not: too little validity left, or a
    /// certificate older than the revocation floor the customer's apps hold.
    private func pendingProblem(_ identity: SigningIdentity, of customer: CustomerName) -> String? {
        do {
            try identity.requireRemainingValidity(at: Date(), schedule: signingSchedule)
        } catch {
            return "\(error)"
        }
        guard let signer = try? store.signerAssignment(of: customer).signer,
              let floor = try? store.signersNotBefore(of: signer == .customerOwn ? customer : nil) else { return nil }
        return identity.revocationFloorProblem(floor)
    }
}
