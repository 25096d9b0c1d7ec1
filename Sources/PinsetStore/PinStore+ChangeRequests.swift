import Foundation
import PinsetAdminContract
import PinsetCore

extension PinStore {
    /// The longest a change request may stay open.
    public static let maximumChangeRequestLifetime = TimeInterval(AdminLimits.changeRequestLifetimeHours.upperBound * 3600)
    /// The most requests one admin may have open at once: a stolen editor token cannot bury reviewers.
    public static let maximumOpenRequestsPerAuthor = 50

    /// Stores a pin edit for review. The hosts must exist and the pins' key material must match their hashes;
    /// nothing of the pin set changes, so the content version stays. `authorToken`, the token the author
    /// authenticated with, is recorded and must still be unrevoked inside the write: revoking it voids the request.
    /// A report-only window it requests must end after now and at most `reportOnlyMaximumSeconds` from now (checked
    /// again when it is approved).
    public func createChangeRequest(
        for customer: CustomerName, edits: [PinEdit], reason: String, lifetime: TimeInterval, author: String, authorToken: AdminTokenReference? = nil,
        reportOnlyMaximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds
    ) throws -> ChangeRequest {
        let reason = try Self.validatedReviewText(reason, what: "reason", required: true)
        guard !edits.isEmpty else { throw StoreError(.invalidInput, "The change request edits nothing. Give pins to add or remove.") }
        guard lifetime >= 60, lifetime <= Self.maximumChangeRequestLifetime else {
            throw StoreError(.invalidInput, "A change request expires between 1 minute and 30 days after it is made; \(Int(lifetime)) s is outside that.")
        }
        for edit in edits {
            switch edit.operation {
            case .addPins(let pins):
                guard !pins.isEmpty else { throw StoreError(.invalidInput, "No pins were given for \(edit.hostname).") }
                try Self.validateKeyMaterial(pins, of: edit.hostname)
            case .setReportOnly(let until):
                try Self.checkReportOnlyEnd(until, now: clock(), maximumSeconds: reportOnlyMaximumSeconds)
            case .removePin, .setWindow:
                break
            }
        }
        let operations = try StoredPinEdits.encode(edits)
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: author, now: clock())
            let owner = try change.customer(customer)
            for hostname in Set(edits.map(\.hostname)) { _ = try change.host(hostname, of: owner) }
            let open = try db.fetchValue(Int64.self, "SELECT count(*) FROM change_request WHERE lower(author) = lower(?) AND state = 'open' AND expires_at > ?",
                                         [author, change.now]) ?? 0
            guard open < Self.maximumOpenRequestsPerAuthor else {
                throw StoreError(.tooManyOpenRequests, "\(author) has \(open) change requests open, the most one admin may have. Nothing was stored. Withdraw some ('pinset review reject ID') or wait for reviewers.")
            }
            if let authorToken {
                // A token revoked while the request was being read and checked must not leave a request behind.
                let valid = try db.fetchValue(Int64.self, """
                    SELECT count(*) FROM admin_token WHERE token_sha256 = ? AND lower(admin_name) = lower(?) AND revoked_at IS NULL
                      AND (expires_at IS NULL OR expires_at > ?)
                    """, [authorToken.sha256.bytes, author, change.now]) ?? 0
                guard valid > 0 else {
                    throw StoreError(.notPermittedAnyMore, "The token '\(authorToken.label)' of \(author) was revoked or expired meanwhile. Nothing was stored.")
                }
            }
            let expires = change.now.addingTimeInterval(lifetime)
            let id = try db.insertReturningID("""
                INSERT INTO change_request (customer_id, author, reason, operations, base_version, created_at, expires_at, state, author_token_sha256, author_token_label)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)
                """, [owner.id, author, reason, operations, owner.version, change.now, expires, authorToken?.sha256.bytes, authorToken?.label])
            let token = authorToken.map { " (token '\($0.label)')" } ?? ""
            try change.recordSettingChange(of: owner, .changeRequested, "change request \(id)\(token): " + edits.map(\.summary).joined(separator: "; ") + "; reason: \(reason)")
            return ChangeRequest(id: id, customer: owner.name, author: author, reason: reason, edits: edits, baseVersion: owner.version,
                                 createdAt: change.now, expiresAt: expires, state: .open, authorTokenLabel: authorToken?.label)
        }
    }

    /// Change requests, newest first: of one customer or all, open (and expired) ones only unless `includeDecided`.
    public func changeRequests(of customer: CustomerName? = nil, includeDecided: Bool = false, limit: Int = 200) throws -> [ChangeRequest] {
        let now = clock()
        return try database.read { db in
            var conditions: [String] = []
            var arguments: [any SQLArgument] = []
            if let customer {
                conditions.append("customer.name = ?")
                arguments.append(customer.rawValue)
            }
            if !includeDecided { conditions.append("change_request.state = 'open'") }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try db.fetchAll("\(Self.changeRequestSelect) \(filter) ORDER BY change_request.id DESC LIMIT ?", arguments + [max(limit, 0)]) {
                try Self.changeRequest($0, now: now)
            }
        }
    }

    /// One change request, or nil.
    public func changeRequest(_ id: Int64) throws -> ChangeRequest? {
        let now = clock()
        return try database.read { db in
            try db.fetchOne("\(Self.changeRequestSelect) WHERE change_request.id = ?", [id]) { try Self.changeRequest($0, now: now) }
        }
    }

    /// Rejects an open (or expired) request. The author may withdraw their own this way.
    public func rejectChangeRequest(_ id: Int64, note: String, actor: String) throws -> ChangeRequest {
        let note = try Self.validatedReviewText(note, what: "note", required: false)
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let request = try Self.openRequest(id, db, now: change.now, forApproval: false)
            let owner = try change.customer(request.customer)
            try db.execute("UPDATE change_request SET state = 'rejected', decided_by = ?, decided_at = ?, decision_note = ? WHERE id = ? AND state = 'open'",
                           [actor, change.now, note, id])
            try change.recordSettingChange(of: owner, .changeRejected, "change request \(id) by \(request.author) rejected" + (note.isEmpty ? "" : ": \(note)"))
            return request.decided(.rejected, by: actor, at: change.now, note: note)
        }
    }

    /// Applies an open request in one transaction: every edit, with the audit entries naming its author and
    /// `approver`, and the request marked applied. `liveChecks` holds the record of the live-chain check of each
    /// host the request edits (none for a host whose check was skipped); a host that changed since its check
    /// refuses the whole request, which then stays open.
    ///
    /// - Throws: `StoreError.changeRequestNotFound`, `.notOpen`, `.selfApproval`, `.stalePinSet`, `.notPermittedAnyMore` (not open, expired, or `approver` is
    ///   its author), `.changedSinceCheck`, or whatever the edits' own writes refuse.
    ///
    /// With `breakGlassReason`, `approver` is an operator applying the request without review (its own request
    /// too): the request is applied the same way, and a break-glass record stays unacknowledged until another
    /// admin acknowledges it (``acknowledgeBreakGlass(_:note:actor:)``).
    ///
    /// `approverMay` is asked, inside the transaction, whether the approver's account as stored now may still apply
    /// the request, and the author must still be an enabled admin: roles taken away, or an admin disabled, while
    /// the live chains were checked stop the write.
    /// Refuses a request whose author is no longer an enabled admin (a stolen token, someone who left), or no
    /// longer holds a role that may propose it (`authorMay`, asked with the author's account as stored now): the
    /// one rule, checked early by the admin library (before any live chain is fetched) and again inside the write.
    public func requireAuthorStillMayPropose(_ request: ChangeRequest, authorMay: (AdminAccount, CustomerName) -> Bool) throws {
        try database.read { db in try Self.requireAuthorStillMayPropose(request, db, now: clock(), authorMay: authorMay) }
    }

    private static func requireAuthorStillMayPropose(
        _ request: ChangeRequest, _ db: any StoreConnection, now: Date, authorMay: (AdminAccount, CustomerName) -> Bool
    ) throws {
        guard let author = try admins(db, named: request.author, at: now).first, author.disabledAt == nil else {
            throw StoreError(.notPermittedAnyMore, "Change request \(request.id) was made by \(request.author), who is no longer an enabled admin. Nothing was changed. Reject it; another editor can make the edit again.")
        }
        guard authorMay(author, request.customer) else {
            throw StoreError(.notPermittedAnyMore, "Change request \(request.id) was made by \(request.author), who may no longer propose pin edits of '\(request.customer)' (roles now: \(author.grants.map(\.description).joined(separator: ", "))). Nothing was changed. Reject it; an editor of the customer can make the edit again.")
        }
    }

    public func applyChangeRequest(
        _ id: Int64, approver: String, liveChecks: [Hostname: LiveCheckRecord], breakGlassReason: String? = nil,
        reportOnlyMaximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds,
        approverMay: (AdminAccount, CustomerName) -> Bool, authorMay: (AdminAccount, CustomerName) -> Bool
    ) throws -> ChangeRequest {
        let breakGlassReason = try breakGlassReason.map { try Self.validatedReviewText($0, what: "break-glass reason", required: true) }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: approver, now: clock())
            let request = try Self.openRequest(id, db, now: change.now, forApproval: true)
            guard breakGlassReason != nil || request.author.lowercased() != approver.lowercased() else {
                throw StoreError(.selfApproval, "Change request \(id) was made by \(approver); another admin must approve it.")
            }
            guard let account = try Self.admins(db, named: approver, at: change.now).first, approverMay(account, request.customer) else {
                throw StoreError(.notPermittedAnyMore, "\(approver) may no longer apply change request \(id): its roles changed, or it was disabled, meanwhile. Nothing was changed.")
            }
            try Self.requireAuthorStillMayPropose(request, db, now: change.now, authorMay: authorMay)
            let owner = try change.customer(request.customer)
            // Reviewed against the pin set it was made for: any later change of the customer (another request, a
            // direct edit, a restore) may have removed on purpose what this request would bring back.
            guard owner.version == request.baseVersion else {
                throw StoreError(.stalePinSet, "Change request \(id) was made at version \(request.baseVersion) of '\(owner.name)', which is at version \(owner.version) now: the pins changed since it was reviewed. Nothing was changed. Reject it, and make the edit again if it is still wanted.")
            }
            // Each host is compared with its live-chain check once, before the first edit changes it.
            var notes: [Hostname: String] = [:]
            for hostname in request.hostnames {
                let (hostID, current) = try change.host(hostname, of: owner)
                try change.requireUnchanged(hostID: hostID, current: current, since: liveChecks[hostname])
                notes[hostname] = liveChecks[hostname].map { "\($0.auditNote); " } ?? ""
            }
            let note = if let breakGlassReason {
                "change request \(id) by \(request.author), applied WITHOUT REVIEW by \(approver) (break-glass): \(breakGlassReason)"
            } else {
                "change request \(id) by \(request.author), approved by \(approver)"
            }
            var version = request.baseVersion
            for edit in request.edits {
                let editNote = (notes[edit.hostname] ?? "") + note
                switch edit.operation {
                case .addPins(let pins):
                    version = try change.addPins(pins, to: edit.hostname, of: request.customer, liveCheck: nil, note: editNote).version
                case .removePin(let hash, let allowLastPin):
                    version = try change.removePin(hash, from: edit.hostname, of: request.customer, allowRemovingLastPin: allowLastPin, liveCheck: nil, note: editNote).version
                case .setWindow(let hash, let window):
                    version = try change.setPinWindow(window, of: hash, host: edit.hostname, of: request.customer, liveCheck: nil, note: editNote).version
                case .setReportOnly(let until):
                    // Bounded from the approval: a window approved late is no longer than one set then.
                    try Self.checkReportOnlyEnd(until, now: change.now, maximumSeconds: reportOnlyMaximumSeconds)
                    version = try change.setReportOnly(edit.hostname, of: request.customer, until: until, reason: request.reason, setBy: request.author,
                                                       approvedBy: breakGlassReason == nil ? approver : "\(approver) without review (break-glass)")
                }
            }
            let updated = try db.execute("""
                UPDATE change_request SET state = 'applied', decided_by = ?, decided_at = ?, applied_version = ? WHERE id = ? AND state = 'open'
                """, [approver, change.now, version, id])
            guard updated == 1 else { throw StoreError(.notOpen, "Change request \(id) was decided meanwhile. Nothing was changed.") }
            if let breakGlassReason {
                try db.execute("""
                    INSERT INTO break_glass (change_request_id, customer, customer_id, applied_by, reason, applied_at, applied_version, request_author)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, [id, request.customer.rawValue, owner.id, approver, breakGlassReason, change.now, version, request.author])
                try db.execute("UPDATE change_request SET decision_note = ? WHERE id = ?", ["break-glass: \(breakGlassReason)", id])
                return request.decided(.applied, by: approver, at: change.now, note: "break-glass: \(breakGlassReason)", appliedVersion: version)
            }
            return request.decided(.applied, by: approver, at: change.now, appliedVersion: version)
        }
    }

    /// A reason or note as stored and shown to reviewers: at most 1000 code points (what the schema's CHECK
    /// counts), without control or bidirectional-override characters that could forge audit text on a terminal.
    public static func validatedReviewText(_ text: String, what: String, required: Bool) throws -> String {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if required && text.isEmpty {
            throw StoreError(.invalidInput, "Give a \(what) of 1 to \(AdminLimits.reasonLength) characters: reviewers decide on it, and the audit log keeps it.")
        }
        guard text.unicodeScalars.count <= AdminLimits.reasonLength else {
            throw StoreError(.invalidInput, "The \(what) is \(text.unicodeScalars.count) characters long; give at most \(AdminLimits.reasonLength).")
        }
        if let scalar = text.unicodeScalars.first(where: TerminalText.needsEscaping) {
            throw StoreError(.invalidInput, "The \(what) contains the control character \(TerminalText.escape(String(scalar))); give plain text.")
        }
        return text
    }

    private static func openRequest(_ id: Int64, _ db: any StoreConnection, now: Date, forApproval: Bool) throws -> ChangeRequest {
        guard let request = try db.fetchOne("\(changeRequestSelect) WHERE change_request.id = ?", [id], { try changeRequest($0, now: now) }) else {
            throw StoreError(.changeRequestNotFound, "There is no change request \(id). List open requests with 'pinset review list'.")
        }
        switch request.state {
        case .open:
            return request
        case .expired where !forApproval:
            return request
        case .expired:
            throw StoreError(.notOpen, "Change request \(id) expired at \(StoredDate.format(request.expiresAt)) UTC and can no longer be approved. Make a new request if the edit is still wanted.")
        case .applied, .rejected:
            throw StoreError(.notOpen, "Change request \(id) was \(request.state.rawValue) by \(request.decidedBy ?? "?") already. Nothing was changed.")
        case .voided:
            throw StoreError(.notOpen, "Change request \(id) was \(request.voidReason ?? "voided"). Nothing was changed. An editor can make the edit again.")
        }
    }

    private static let changeRequestSelect = """
        SELECT change_request.id, customer.name, change_request.author, change_request.reason, change_request.operations,
               change_request.base_version, change_request.created_at, change_request.expires_at, change_request.state,
               change_request.decided_by, change_request.decided_at, change_request.decision_note, change_request.applied_version,
               change_request.author_token_label, change_request.void_reason
        FROM change_request JOIN customer ON change_request.customer_id = customer.id
        """

    private static func changeRequest(_ row: any StoreRow, now: Date) throws -> ChangeRequest {
        let id: Int64 = try row.decode(atIndex: 0)
        let stored: String = try row.decode(atIndex: 8)
        guard var state = ChangeRequest.State(rawValue: stored), state != .expired, state != .voided else {
            throw StoreError(.corruptData, "Change request \(id) has the unknown state '\(stored)'.")
        }
        let expiresAt: Date = try row.decode(atIndex: 7)
        let voidReason: String? = try row.decode(atIndex: 14)
        if state == .open && expiresAt <= now { state = .expired }
        if state == .rejected && voidReason != nil { state = .voided }
        return ChangeRequest(
            id: id, customer: try StoredRows.customerName(row.decode(atIndex: 1)), author: try row.decode(atIndex: 2),
            reason: try row.decode(atIndex: 3), edits: try StoredPinEdits.decode(row.decode(atIndex: 4), request: id),
            baseVersion: try row.decode(atIndex: 5), createdAt: try row.decode(atIndex: 6), expiresAt: expiresAt, state: state,
            decidedBy: try row.decode(atIndex: 9), decidedAt: try row.decode(atIndex: 10), decisionNote: try row.decode(atIndex: 11),
            appliedVersion: try row.decode(atIndex: 12), authorTokenLabel: try row.decode(atIndex: 13), voidReason: voidReason
        )
    }
}
