import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// Edits of hosts and pins by a principal: one rule for the local operator (the CLI on this host's database) and
/// for a named admin (the admin API, the dashboard, the CLI with a token), which is further held to its roles.
extension Admin {
    /// The live-chain check of an edit of `hostname`, for a front end that shows its outcome or dry-runs it before
    /// committing: the result it permits is what ``applyPinEdit(_:of:checked:note:by:)``,
    /// ``updateHost(_:of:port:includeSubdomains:checked:by:)`` and ``addHost(_:port:includeSubdomains:pins:checked:to:by:)``
    /// commit with.
    public func liveChainGuard(for hostname: Hostname, of customer: CustomerName, settings: LiveCheckSettings) -> LiveChainGuard {
        LiveChainGuard(store: store, customer: customer, hostname: hostname, settings: settings)
    }

    /// Adds a host to a customer, with `pins` in the same change when given (the host's `checked` outcome of
    /// ``LiveChainGuard/checkNewHost(_:)`` goes to its audit entry). A named admin adds hosts without pins, as an
    /// editor: their pins are then proposed as pin edits (and reviewed where the customer requires it).
    public func addHost(
        _ hostname: Hostname, port: Int, includeSubdomains: Bool, pins: [Pin] = [], checked: LiveEditCheck.Outcome? = nil,
        to customer: CustomerName, by principal: AdminPrincipal
    ) throws {
        try requireEditor(principal, of: customer, "add hosts")
        try Self.checkNewHostName(hostname)
        try Self.checkPort(port)
        if includeSubdomains {
            try checkIncludeSubdomains(hostname)
            // Pins later approved for this host then cover every name below it, and a change request shows its
            // reviewer the pins, not this setting: on a customer that requires review, only an operator sets it.
            if let account = principal.account, !account.isOperator, try store.requiresReview(customer) {
                throw AdminError("Admin \(account.name) may not add a host with include-subdomains to '\(customer)', which requires review: the pins later approved for it would cover every subdomain, which a reviewer does not see in the request. Ask an operator to add it.", kind: .forbidden)
            }
        }
        if !pins.isEmpty {
            if let account = principal.account {
                throw AdminError("Admin \(account.name) adds \(hostname) without pins: propose its pins as a pin edit, which '\(customer)' reviews where it requires review.", kind: .forbidden)
            }
            guard checked != nil else {
                throw AdminError("The pins of \(hostname) were not checked against its live chain. Nothing was changed.")
            }
        }
        try store.addHost(
            hostname, port: UInt16(port), includeSubdomains: includeSubdomains, pins: pins, to: customer, liveCheckNote: checked?.auditNote, actor: principal.actor
        )
    }

    /// Marks a host unmonitored (`reason` given) or monitored again (nil), as an editor. Returns whether anything
    /// changed. On a customer that requires review, marking it unmonitored is an operator's: fewer checks, and what
    /// a reviewer's live check shows, would change unreviewed.
    public func setUnmonitored(_ hostname: Hostname, of customer: CustomerName, reason: String?, by principal: AdminPrincipal) throws -> Bool {
        try requireEditor(principal, of: customer, "update hosts")
        if reason != nil {
            try requireOperatorWhereReviewed(customer, principal, "change the settings of \(hostname)", because: Self.hostSettingsNeedReview)
        }
        // The store holds the reason to the rule of every reason an admin writes.
        return try store.setUnmonitored(hostname, of: customer, reason: reason, actor: principal.actor)
    }

    /// Changes a host's port or include-subdomains setting (nil keeps one), as an editor, committed with `checked`:
    /// the live-chain check of the host with the new settings (nil when the host does not exist, which the store
    /// then reports). On a customer that requires review, an operator's. Returns whether anything changed.
    public func updateHost(
        _ hostname: Hostname, of customer: CustomerName, port: Int?, includeSubdomains: Bool?, checked: PermittedHostEdit?, by principal: AdminPrincipal
    ) throws -> Bool {
        try requireEditor(principal, of: customer, "update hosts")
        try Self.requireCheck(checked, for: principal, hostname, of: customer)
        if let port { try Self.checkPort(port) }
        if includeSubdomains == true { try checkIncludeSubdomains(hostname) }
        try requireOperatorWhereReviewed(customer, principal, "change the settings of \(hostname)", because: Self.hostSettingsNeedReview)
        return try store.updateHost(
            hostname, of: customer, port: port.map { UInt16($0) }, includeSubdomains: includeSubdomains, liveCheck: checked?.record, actor: principal.actor
        )
    }

    /// Removes a host and its pins, as an editor; on a customer that requires review, as an operator, since apps
    /// then stop pinning the host at all without a reviewer having seen it.
    public func removeHost(_ hostname: Hostname, from customer: CustomerName, allowLastHost: Bool, by principal: AdminPrincipal) throws {
        try requireEditor(principal, of: customer, "remove hosts")
        try requireOperatorWhereReviewed(customer, principal, "remove \(hostname)", because: "apps would stop pinning it without a reviewer seeing it")
        try store.removeHost(hostname, from: customer, allowRemovingLastHost: allowLastHost, actor: principal.actor)
    }

    /// Applies a pin edit at once, committed with `checked`: the live-chain check of its result
    /// (``liveChainGuard(for:of:settings:)``; nil when the host does not exist, which the store then reports). A
    /// named admin's edit needs the editor role and is refused inside the write when the customer requires review:
    /// it is then a change request (``proposePinEdits(_:for:reason:lifetime:by:liveCheck:)``). `note` goes to the
    /// audit entry.
    public func applyPinEdit(_ edit: PinEdit, of customer: CustomerName, checked: PermittedHostEdit?, note: String? = nil, by principal: AdminPrincipal) throws -> PinChange {
        if let account = principal.account { try account.require(account.mayEdit(customer), "edit pins", customer) }
        try Self.requireCheck(checked, for: principal, edit.hostname, of: customer)
        let unlessReviewRequired = principal.account != nil
        switch edit.operation {
        case .addPins(let pins):
            return try store.addPins(
                pins, to: edit.hostname, of: customer, liveCheck: checked?.record, unlessReviewRequired: unlessReviewRequired, note: note, actor: principal.actor
            )
        case .removePin(let fingerprint, let allowLastPin):
            return try store.removePin(
                fingerprint, from: edit.hostname, of: customer, allowRemovingLastPin: allowLastPin, liveCheck: checked?.record,
                unlessReviewRequired: unlessReviewRequired, note: note, actor: principal.actor
            )
        case .setWindow(let fingerprint, let window):
            return try store.setPinWindow(
                window, of: fingerprint, host: edit.hostname, of: customer, liveCheck: checked?.record,
                unlessReviewRequired: unlessReviewRequired, note: note, actor: principal.actor
            )
        case .setReportOnly:
            throw AdminError("A report-only window is not a pin edit: set it with 'pinset host report-only' (Admin.setReportOnly).")
        }
    }

    static let hostSettingsNeedReview = "its port, include-subdomains and monitoring decide what apps enforce and what a reviewer's live check shows"

    static func checkPort(_ port: Int) throws {
        guard AdminLimits.ports.contains(port) else {
            throw AdminError("The port \(port) is not one from \(AdminLimits.ports.lowerBound) to \(AdminLimits.ports.upperBound).")
        }
    }
}

/// Customer settings and removal, named admins, and the database, by a principal: an operator's.
extension Admin {
    /// Changes a customer's settings, as an operator: whether its apps include legacy GCX clients, and whether
    /// its pin edits need a second admin (nil keeps a setting). Returns whether anything changed.
    public func updateCustomer(_ customer: CustomerName, servesLegacyClients: Bool?, requiresReview: Bool?, by principal: AdminPrincipal) throws -> Bool {
        try requireOperator(principal, of: customer, "change the settings of '\(customer)'")
        guard servesLegacyClients != nil || requiresReview != nil else {
            throw AdminError("The update changes nothing: give 'servesLegacyClients' or 'requiresReview'.")
        }
        return try store.updateCustomerSettings(customer, servesLegacyClients: servesLegacyClients, requiresReview: requiresReview, actor: principal.actor)
    }

    /// Turns review of the customer's pin edits by named admins on or off, as an operator; audited each time.
    public func setRequiresReview(_ required: Bool, for customer: CustomerName, by principal: AdminPrincipal) throws {
        try requireOperator(principal, of: customer, "change the settings of '\(customer)'")
        try store.setRequiresReview(required, for: customer, actor: principal.actor)
    }

    /// Removes a customer with its hosts and pins, as an operator. Returns its stored name and the signer it had:
    /// an own key stays in the data directory, since apps may still trust it.
    public func removeCustomer(_ customer: CustomerName, by principal: AdminPrincipal) throws -> (customer: CustomerName, signer: SignerAssignment) {
        try requireOperator(principal, of: customer, "remove customer '\(customer)'")
        let (stored, signer, _) = try store.signerAssignment(of: customer)
        try store.removeCustomer(customer, actor: principal.actor)
        return (stored, signer)
    }

    /// Adds a named admin with its roles, as an operator.
    public func addAdmin(_ name: String, grants: [AdminGrant], by principal: AdminPrincipal) throws {
        try requireOperator(principal, "manage admins")
        try store.addAdmin(name, grants: grants, actor: principal.actor)
    }

    /// Replaces an admin's roles (nil keeps them), or disables or enables it, as an operator.
    public func updateAdmin(_ name: String, grants: [AdminGrant]?, disabled: Bool?, by principal: AdminPrincipal) throws {
        try requireOperator(principal, "manage admins")
        try store.updateAdmin(name, grants: grants, disabled: disabled, actor: principal.actor)
    }

    /// Revokes an admin's tokens (those with `label`, or all), as an operator; the open change requests they made
    /// are voided.
    public func revokeAdminTokens(of name: String, label: String?, by principal: AdminPrincipal) throws -> AdminTokenRevocation {
        try requireOperator(principal, "manage admins")
        return try store.revokeAdminTokens(of: name, label: label, actor: principal.actor)
    }

    /// Every named admin with its roles, for an operator.
    public func admins(visibleTo principal: AdminPrincipal) throws -> [AdminAccount] {
        try requireOperator(principal, "list admins")
        return try store.admins()
    }

    /// Copies the database to `destination` (outside the data directory and the customer key directory) with the
    /// store's online backup, as an operator, and checks the copy's integrity.
    public func backup(to destination: String, replacingExisting: Bool, by principal: AdminPrincipal) throws -> DatabaseBackup {
        try requireOperator(principal, "back up the database")
        try store.backup(to: destination, replacingExisting: replacingExisting, protectedDirectories: [dataDirectory.path, dataDirectory.customerKeyDirectory])
        let integrity = try PinStore.open(path: destination, readOnly: true).integrityCheck()
        return DatabaseBackup(database: store.location.description, integrity: integrity)
    }
}

/// What `backup` wrote: the database it copied, and the integrity check of the copy.
public struct DatabaseBackup: Sendable {
    public var database: String
    public var integrity: [String]
}

extension Admin {
    /// A named admin's edit is written only with the result its live-chain check permitted: the guard finds no
    /// result only for a host that does not exist.
    private static func requireCheck(_ checked: PermittedHostEdit?, for principal: AdminPrincipal, _ hostname: Hostname, of customer: CustomerName) throws {
        guard principal.account != nil, checked == nil else { return }
        throw AdminError.noHost(hostname, of: customer)
    }
}
