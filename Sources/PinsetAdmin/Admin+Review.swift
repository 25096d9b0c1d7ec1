import Foundation
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetStore

/// What became of a pin edit proposed by a named admin.
public enum ProposedEditOutcome: Sendable {
    /// The customer requires review: the edit waits as this request.
    case requested(ChangeRequest)
    /// The customer does not require review: the edit was applied, with this version.
    case applied(PinChange)
}

extension Admin {
    /// The enabled admin a bearer token belongs to.
    ///
    /// - Throws: `AdminError` when the token is malformed, unknown, revoked or expired, or its admin is disabled;
    ///   the message does not say which, so a guess learns nothing.
    public func authenticate(_ token: AdminToken, now: Date = Date()) throws -> AdminAccount {
        try authenticate(tokenDigest: token.sha256, now: now)
    }

    /// The admin of the token with this SHA-256, as ``authenticate(_:now:)`` decides it: for a dashboard session,
    /// which keeps the digest rather than the token, so that revoking the token or disabling its admin ends it.
    public func authenticate(tokenDigest: SHA256Fingerprint, now: Date = Date()) throws -> AdminAccount {
        guard let account = try store.admin(authenticatedBy: tokenDigest, at: now) else {
            throw AdminError("The admin token was not accepted: it is unknown, revoked or expired, or its admin is disabled. Ask an operator for a new one ('pinset admin token NAME').", kind: .unauthenticated)
        }
        return account
    }

    /// A new token for `admin`, valid for `lifetime` (or until revoked). Its text is returned once and never stored.
    public func issueToken(for admin: String, label: String, lifetime: TimeInterval?, now: Date = Date()) throws -> AdminToken {
        let label = label.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(label.count), !label.unicodeScalars.contains(where: TerminalText.needsEscaping) else {
            throw AdminError("Give the token a label of 1 to 100 printable characters (where it is used, say 'laptop' or 'ci'); revoking by label needs it.")
        }
        if let lifetime, lifetime < 60 { throw AdminError("A token must live at least a minute; give a longer --expires-in.") }
        let token = AdminToken.generate()
        try store.addAdminToken(sha256: token.sha256, of: admin, label: label, expiresAt: lifetime.map { now.addingTimeInterval($0) }, actor: actor)
        return token
    }

    /// Proposes edits of a customer's pins as `author`: a change request when the customer requires review,
    /// otherwise applied at once after the live-chain check.
    public func proposePinEdits(
        _ edits: [PinEdit], for customer: CustomerName, reason: String, lifetime: TimeInterval, by author: AdminAccount, liveCheck: LiveCheckSettings
    ) async throws -> ProposedEditOutcome {
        try author.require(author.mayEdit(customer), "edit pins", customer)
        guard let hostname = edits.first?.hostname else { throw AdminError("The edit changes nothing. Give pins to add or remove.") }
        if try store.requiresReview(customer) {
            return .requested(try store.createChangeRequest(for: customer, edits: edits, reason: reason, lifetime: lifetime, author: author.name, authorToken: author.token))
        }
        guard edits.allSatisfy({ $0.hostname == hostname }), edits.count == 1 else {
            throw AdminError("A direct edit changes one host in one step; make a change request for several.")
        }
        let edit = edits[0]
        let checked = try await liveChainGuard(for: hostname, of: customer, settings: liveCheck.started(by: author)).check { edit.applied(to: $0) }
        // The check waited on the network: the author's roles are read again (review turned on meanwhile is checked
        // again by the store, in the write).
        let current = try requireStill(author) { current in try current.require(current.mayEdit(customer), "edit pins", customer) }
        let text = try PinStore.validatedReviewText(reason, what: "reason", required: false)
        return .applied(try applyPinEdit(edit, of: customer, checked: checked, note: text.isEmpty ? nil : "reason: \(text)", by: .admin(current)))
    }

    /// The requests `viewer` may see: of customers it has any role for.
    public func changeRequests(visibleTo viewer: AdminAccount, customer: CustomerName? = nil, includeDecided: Bool = false) throws -> [ChangeRequest] {
        if let customer { try viewer.require(viewer.mayView(customer), "see change requests", customer) }
        return try store.changeRequests(of: customer, includeDecided: includeDecided).filter { viewer.mayView($0.customer) }
    }

    /// One request, if `viewer` may see it.
    public func changeRequest(_ id: Int64, visibleTo viewer: AdminAccount) throws -> ChangeRequest {
        guard let request = try store.changeRequest(id), viewer.mayView(request.customer) else {
            throw AdminError("There is no change request \(id) that \(viewer.name) may see. List them with 'pinset review list'.", kind: .notFound)
        }
        return request
    }

    /// How each host of the request would fare against its live chain if it were approved now; commits nothing.
    public func preview(
        _ request: ChangeRequest, liveCheck: (Hostname) -> LiveCheckSettings
    ) async throws -> [(hostname: Hostname, preview: HostEditPreview)] {
        try await previews(of: request.edits, for: request.customer, liveCheck: liveCheck)
    }

    /// Each host `edits` touch, once, in order: the edits' result checked against its live chain; commits nothing.
    func previews(
        of edits: [PinEdit], for customer: CustomerName, liveCheck: (Hostname) -> LiveCheckSettings
    ) async throws -> [(hostname: Hostname, preview: HostEditPreview)] {
        var previews: [(Hostname, HostEditPreview)] = []
        var seen: Set<Hostname> = []
        for hostname in edits.map(\.hostname) where seen.insert(hostname).inserted {
            let liveGuard = LiveChainGuard(store: store, customer: customer, hostname: hostname, settings: liveCheck(hostname))
            previews.append((hostname, try await liveGuard.preview { PinEdit.applied(edits, for: hostname, to: $0) }))
        }
        return previews
    }

    /// Approves and applies a request as `reviewer`, after checking every host it edits against its live chain
    /// again. Refused, with the request left open, when the reviewer lacks the role or wrote the request, the
    /// check fails, or a host changed since the check.
    /// A report-only window it sets may end at most `reportOnlyMaximumSeconds` from now (the server's
    /// `reportOnlyMaximumHours`).
    public func approve(
        _ id: Int64, by reviewer: AdminAccount, liveCheck: (Hostname) -> LiveCheckSettings, reportOnlyMaximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds
    ) async throws -> ChangeRequest {
        let request = try changeRequest(id, visibleTo: reviewer)
        try reviewer.require(reviewer.mayReview(request.customer), "approve change requests", request.customer)
        guard request.author.lowercased() != reviewer.name.lowercased() else {
            throw AdminError("Change request \(id) was made by \(reviewer.name); another admin with the reviewer role must approve it. In an emergency an operator can apply it without review ('pinset review break-glass \(id) --reason …').", code: .selfApproval)
        }
        return try await apply(request, by: reviewer, liveCheck: liveCheck, breakGlassReason: nil, reportOnlyMaximumSeconds: reportOnlyMaximumSeconds)
    }

    /// Applies a request without a second admin's review, as an operator (its author too), with a reason: for an
    /// emergency when no reviewer can be reached. The live-chain check runs as for an approval. The application is
    /// audited and stays on `/status`, the metrics and `review list` until another admin acknowledges it.
    public func breakGlass(
        _ id: Int64, by admin: AdminAccount, reason: String, liveCheck: (Hostname) -> LiveCheckSettings,
        reportOnlyMaximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds
    ) async throws -> ChangeRequest {
        let request = try changeRequest(id, visibleTo: admin)
        guard admin.isOperator else {
            throw AdminError("Admin \(admin.name) may not apply change request \(id) without review: only an operator may break glass. Ask a reviewer of '\(request.customer)' to approve it.", kind: .forbidden)
        }
        let reason = try PinStore.validatedReviewText(reason, what: "break-glass reason", required: true)
        return try await apply(request, by: admin, liveCheck: liveCheck, breakGlassReason: reason, reportOnlyMaximumSeconds: reportOnlyMaximumSeconds)
    }

    private func apply(
        _ request: ChangeRequest, by admin: AdminAccount, liveCheck: (Hostname) -> LiveCheckSettings, breakGlassReason: String?, reportOnlyMaximumSeconds: Int64
    ) async throws -> ChangeRequest {
        let id = request.id
        switch request.state {
        case .open: break
        case .expired: throw AdminError("Change request \(id) expired at \(AdminDocuments.date(request.expiresAt)) and can no longer be approved. Make a new request if the edit is still wanted.", code: .notOpen)
        case .applied, .rejected: throw AdminError("Change request \(id) was \(request.state.rawValue) by \(request.decidedBy ?? "?") already. Nothing was changed.", code: .notOpen)
        case .voided: throw AdminError("Change request \(id) was \(request.voidReason ?? "voided"). Nothing was changed. An editor can make the edit again.", code: .notOpen)
        }
        // Before any host is contacted; the store checks it again inside the write.
        try store.requireAuthorStillMayPropose(request) { author, customer in author.mayEdit(customer) }
        var records: [Hostname: LiveCheckRecord] = [:]
        // A report-only window leaves the pins as they are: there is no edit of them to check against the chain
        // (which, on the night one is asked for, they usually do not match).
        for hostname in request.hostnames where request.edits.contains(where: { $0.hostname == hostname && !$0.keepsPins }) {
            let liveGuard = LiveChainGuard(store: store, customer: request.customer, hostname: hostname, settings: liveCheck(hostname).started(by: admin))
            if let permitted = try await liveGuard.check({ PinEdit.applied(request.edits, for: hostname, to: $0) }) {
                records[hostname] = permitted.record
            }
        }
        let breaksGlass = breakGlassReason != nil
        return try store.applyChangeRequest(
            id, approver: admin.name, liveChecks: records, breakGlassReason: breakGlassReason, reportOnlyMaximumSeconds: reportOnlyMaximumSeconds,
            approverMay: { account, customer in breaksGlass ? account.isOperator : account.mayReview(customer) },
            authorMay: { author, customer in author.mayEdit(customer) })
    }

    /// Break-glass applications `viewer` may see: of customers it has any role for (every one for an operator).
    /// Acknowledged ones, the newest `limit` of them, only with `includeAcknowledged`; unacknowledged ones always
    /// all.
    public func breakGlassEvents(
        visibleTo viewer: AdminAccount, customer: CustomerName? = nil, includeAcknowledged: Bool = false, limit: Int = 200
    ) throws -> [BreakGlassEvent] {
        let visible = try store.breakGlassEvents(includeAcknowledged: includeAcknowledged).filter { event in
            viewer.mayView(event) && customer.map { $0.rawValue.lowercased() == event.customer.lowercased() } ?? true
        }
        let unacknowledged = visible.filter { !$0.isAcknowledged }
        return unacknowledged + visible.filter(\.isAcknowledged).prefix(max(limit - unacknowledged.count, 0))
    }

    /// Acknowledges a break-glass application as `admin`: an operator, or a reviewer of its customer, other than
    /// the operator who applied it and the author of the request it applied.
    public func acknowledgeBreakGlass(_ id: Int64, by admin: AdminAccount, note: String) throws -> BreakGlassEvent {
        guard let event = try store.breakGlassEvent(id), admin.mayView(event) else {
            throw AdminError("There is no break-glass application \(id) that \(admin.name) may see. List them with 'pinset review list'.", kind: .notFound)
        }
        if event.involves(admin.name) {
            let part = event.appliedBy.lowercased() == admin.name.lowercased() ? "applied it" : "wrote change request \(event.changeRequestID), which it applied"
            throw AdminError("Admin \(admin.name) may not acknowledge break-glass application \(id): \(admin.name) \(part). An acknowledgement is a second look; an operator or a reviewer of '\(event.customer)' who took no part in it must give it.", kind: .refused, code: .selfApproval)
        }
        guard admin.mayAcknowledge(event) else {
            throw AdminError("Admin \(admin.name) may not acknowledge break-glass application \(id): an operator or a reviewer of '\(event.customer)' must.", kind: .forbidden)
        }
        return try store.acknowledgeBreakGlass(id, note: note, actor: admin.name) { account, event in account.mayAcknowledge(event) }
    }

    /// Rejects a request as `reviewer`, or withdraws it as its author.
    public func reject(_ id: Int64, by admin: AdminAccount, note: String) throws -> ChangeRequest {
        let request = try changeRequest(id, visibleTo: admin)
        let isAuthor = request.author.lowercased() == admin.name.lowercased()
        try admin.require(isAuthor || admin.mayReview(request.customer), "reject change requests", request.customer)
        return try store.rejectChangeRequest(id, note: note, actor: admin.name)
    }
}
