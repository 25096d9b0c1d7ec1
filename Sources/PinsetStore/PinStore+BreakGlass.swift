import Foundation
import PinsetCore

/// A change request an operator applied without a second admin's review.
public struct BreakGlassEvent: Sendable, Hashable {
    public var id: Int64
    public var changeRequestID: Int64
    /// The customer's name when it happened.
    public var customer: String
    /// The customer was removed since: a customer added later under the same name is another one, so only
    /// operators see (and acknowledge) the record.
    public var customerRemoved: Bool
    public var appliedBy: String
    /// Who wrote the change request it applied; nil for a record from before authors were kept.
    public var requestAuthor: String?
    public var reason: String
    public var appliedAt: Date
    public var appliedVersion: Int64
    public var acknowledgedBy: String?
    public var acknowledgedAt: Date?
    public var acknowledgement: String?

    public var isAcknowledged: Bool { acknowledgedAt != nil }

    /// Whether `admin` took part in the edit, as the operator who applied it or the author of its request: an
    /// acknowledgement is the second look, so it must come from someone else.
    public func involves(_ admin: String) -> Bool {
        appliedBy.lowercased() == admin.lowercased() || requestAuthor?.lowercased() == admin.lowercased()
    }
}

extension PinStore {
    /// Break-glass applications, newest first: only those not yet acknowledged unless `includeAcknowledged`. All of
    /// them: each is an operator's deliberate act with a reason, so there are few, and the server's count of
    /// unacknowledged ones must not stop at a page size.
    public func breakGlassEvents(includeAcknowledged: Bool = false) throws -> [BreakGlassEvent] {
        try database.read { db in
            let filter = includeAcknowledged ? "" : "WHERE acknowledged_at IS NULL"
            return try db.fetchAll("\(Self.breakGlassSelect) \(filter) ORDER BY id DESC", [], Self.breakGlassEvent)
        }
    }

    /// One break-glass application, or nil.
    public func breakGlassEvent(_ id: Int64) throws -> BreakGlassEvent? {
        try database.read { db in try db.fetchOne("\(Self.breakGlassSelect) WHERE id = ?", [id], Self.breakGlassEvent) }
    }

    /// Records that `actor` has looked at a break-glass application. Neither the operator who applied it nor the
    /// author of the request it applied can: the point is that a second person sees every unreviewed edit.
    ///
    /// `actorMay` is asked, inside the transaction, whether the actor's account as stored now may acknowledge it:
    /// roles taken away meanwhile stop the write.
    public func acknowledgeBreakGlass(_ id: Int64, note: String, actor: String, actorMay: (AdminAccount, BreakGlassEvent) -> Bool) throws -> BreakGlassEvent {
        let note = try Self.validatedReviewText(note, what: "note", required: false)
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            guard var event = try db.fetchOne("\(Self.breakGlassSelect) WHERE id = ?", [id], Self.breakGlassEvent) else {
                throw StoreError(.changeRequestNotFound, "There is no break-glass application \(id). List them with 'pinset review list'.")
            }
            if let by = event.acknowledgedBy {
                throw StoreError(.notOpen, "Break-glass application \(id) was acknowledged by \(by) already. Nothing was changed.")
            }
            guard !event.involves(actor) else {
                let role = event.appliedBy.lowercased() == actor.lowercased() ? "applied by" : "of a change request written by"
                throw StoreError(.selfApproval, "Break-glass application \(id) was \(role) \(actor); an admin who took no part in it must acknowledge it. Nothing was changed.")
            }
            guard let account = try Self.admins(db, named: actor, at: change.now).first, actorMay(account, event) else {
                throw StoreError(.notPermittedAnyMore, "\(actor) may no longer acknowledge break-glass application \(id): its roles changed, or it was disabled, meanwhile. Nothing was changed.")
            }
            let updated = try db.execute("""
                UPDATE break_glass SET acknowledged_by = ?, acknowledged_at = ?, acknowledgement = ? WHERE id = ? AND acknowledged_at IS NULL
                """, [actor, change.now, note.isEmpty ? nil : note, id])
            guard updated == 1 else { throw StoreError(.notOpen, "Break-glass application \(id) was acknowledged meanwhile. Nothing was changed.") }
            let details = "break-glass application \(id) (change request \(event.changeRequestID) by \(event.appliedBy)) acknowledged" + (note.isEmpty ? "" : ": \(note)")
            if !event.customerRemoved, let customer = try? CustomerName(event.customer), let owner = try? change.customer(customer) {
                try change.recordSettingChange(of: owner, .breakGlassAcknowledged, details)
            } else {
                try change.recordDeploymentChange(.breakGlassAcknowledged, "customer \(event.customer): " + details)
            }
            event.acknowledgedBy = actor
            event.acknowledgedAt = change.now
            event.acknowledgement = note.isEmpty ? nil : note
            return event
        }
    }

    private static let breakGlassSelect = """
        SELECT id, change_request_id, customer, applied_by, reason, applied_at, applied_version, acknowledged_by, acknowledged_at, acknowledgement,
               customer_id IS NULL, request_author
        FROM break_glass
        """

    private static func breakGlassEvent(_ row: any StoreRow) throws -> BreakGlassEvent {
        BreakGlassEvent(
            id: try row.decode(atIndex: 0), changeRequestID: try row.decode(atIndex: 1), customer: try row.decode(atIndex: 2),
            customerRemoved: try row.decode(atIndex: 10),
            appliedBy: try row.decode(atIndex: 3), requestAuthor: try row.decode(atIndex: 11), reason: try row.decode(atIndex: 4), appliedAt: try row.decode(atIndex: 5),
            appliedVersion: try row.decode(atIndex: 6), acknowledgedBy: try row.decode(atIndex: 7), acknowledgedAt: try row.decode(atIndex: 8),
            acknowledgement: try row.decode(atIndex: 9)
        )
    }
}
