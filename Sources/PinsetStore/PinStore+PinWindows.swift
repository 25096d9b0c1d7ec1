import Foundation
import PinsetCore

/// A pin that a signing pass started or stopped publishing.
public struct PinWindowTransition: Sendable, Hashable {
    public var customer: CustomerName
    public var hostname: Hostname
    public var pin: Pin
    /// True: the pin entered the bundle; false: it left.
    public var entered: Bool
    /// The customer's content version that first has (or first lacks) the pin.
    public var version: Int64
}

extension PinStore {
    /// The time by this store's clock: what its edits are stamped with and their publish windows judged at.
    public func now() -> Date { clock() }

    /// The actor of the audit entries a signing pass writes when pins enter or leave their windows.
    public static let pinWindowActor = "pinset (publish window)"

    /// Sets the publish window of one pin of a host (the pin with this SPKI hash, or the certificate-only pin with
    /// this certificate hash), or clears it (`nil`). An edit like any other: a new content version, the transparency
    /// log, the audit log, and the rules of `requireScheduleKeepsHostPinned` at every time the window changes what
    /// is published; the pin is listed or withheld at once according to the window at this edit's time.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, `.pinNotFound`, `.refused` when the window is
    ///   the one the pin has or has already ended, `.lastPinOfHost` or `.tooFewLegacyPins` when the schedule would leave the host without
    ///   a published pin, or legacy clients with fewer than two they can use.
    @discardableResult
    public func setPinWindow(
        _ window: PinWindow?, of fingerprint: SHA256Fingerprint, host hostname: Hostname, of customer: CustomerName,
        liveCheck: LiveCheckRecord? = nil, unlessReviewRequired: Bool = false, note: String? = nil, actor: String
    ) throws -> PinChange {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            if unlessReviewRequired { try change.requireNoReview(of: customer) }
            return try change.setPinWindow(window, of: fingerprint, host: hostname, of: customer, liveCheck: liveCheck, note: note)
        }
    }

    /// Publishes the pins whose window has begun and withholds those whose window has ended, as a signing pass at
    /// `time` finds them: each customer whose listed pins change gets one new content version (logged and audited
    /// like an edit, by `pinWindowActor`), in one transaction. Returns the pins that changed; reads only when none did.
    @discardableResult
    public func applyPinWindows(at time: Date) throws -> [PinWindowTransition] {
        // Every pass asks; a read answers the common case without taking the write lock.
        guard try database.read({ db in try !PinWindowApplier.due(at: time, db).isEmpty }) else { return [] }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: Self.pinWindowActor, now: time)
            return try PinWindowApplier.apply(change)
        }
    }
}

/// The pass's side of publish windows.
enum PinWindowApplier {
    struct Due {
        var pinID: Int64
        var customerID: Int64
        var hostname: Hostname
        var pin: Pin
        var entering: Bool
    }

    /// The pins whose listed state differs from what a pass at `time` publishes.
    static func due(at time: Date, _ db: any StoreConnection) throws -> [Due] {
        var decoder = StoredRows.PinDecoder()
        var found: [Due] = []
        try db.forEachRow("""
            SELECT pin.id, host.customer_id, coalesce(host.published_hostname, host.hostname), \(StoredRows.pinColumns)
            FROM pin JOIN host ON pin.host_id = host.id
            WHERE pin.window_not_before IS NOT NULL OR pin.window_not_after IS NOT NULL
            """, []) { row in
            let (_, pin, withheld) = try decoder.storedPin(row, at: 3)
            let published = pin.isPublished(at: time)
            guard published == withheld else { return }
            let stored: String = try row.decode(atIndex: 2)
            guard let hostname = try? Hostname(stored) else {
                throw StoreError(.corruptData, "The stored host name '\(stored)' is not valid. Fix or remove the row with the database's own tool (sqlite3 or psql).")
            }
            found.append(Due(pinID: try row.decode(atIndex: 0), customerID: try row.decode(atIndex: 1), hostname: hostname, pin: pin, entering: published))
        }
        return found
    }

    static func apply(_ change: ChangeRecorder) throws -> [PinWindowTransition] {
        let due = try due(at: change.now, change.db)
        var transitions: [PinWindowTransition] = []
        for customerID in Set(due.map(\.customerID)).sorted() {
            guard let owner = try change.customer(id: customerID) else { continue }
            let pins = due.filter { $0.customerID == customerID }
            for item in pins {
                // An entering pin is stamped with the version that first lists it again (recordPublishedVersion).
                try change.db.execute(
                    "UPDATE pin SET withheld = ?, published_version = CASE WHEN ? = 1 THEN NULL ELSE published_version END WHERE id = ?",
                    [Int64(item.entering ? 0 : 1), Int64(item.entering ? 1 : 0), item.pinID])
            }
            let details = pins.map { item in
                "\(item.hostname): pin \(item.pin.displayName) \(item.entering ? "entered" : "left") the bundle (publish window \(item.pin.window?.description ?? "none"))"
            }.joined(separator: "; ")
            let version = try change.recordChange(of: owner, .pinWindowsApplied, details)
            transitions += pins.map { PinWindowTransition(customer: owner.name, hostname: $0.hostname, pin: $0.pin, entered: $0.entering, version: version) }
        }
        return transitions
    }
}

extension ChangeRecorder {
    /// `PinStore.setPinWindow` inside a transaction that is already open.
    func setPinWindow(
        _ window: PinWindow?, of fingerprint: SHA256Fingerprint, host hostname: Hostname, of customer: CustomerName, liveCheck: LiveCheckRecord?, note: String? = nil
    ) throws -> PinChange {
        let owner = try self.customer(customer)
        let (hostID, current) = try host(hostname, of: owner)
        try requireUnchanged(hostID: hostID, current: current, since: liveCheck)
        let match = "host_id = ? AND (spki_sha256 = ? OR (spki_sha256 IS NULL AND certificate_sha256 = ?))"
        let matchArguments: [any SQLArgument] = [hostID, fingerprint.bytes, fingerprint.bytes]
        var decoder = StoredRows.PinDecoder()
        guard let stored = try db.fetchOne("SELECT \(StoredRows.pinColumns) FROM pin WHERE \(match)", matchArguments, { try decoder.storedPin($0) }) else {
            throw StoreError(.pinNotFound, "Host \(hostname) of customer '\(owner.name)' has no pin \(fingerprint.base64). List its pins with 'pinset pin list \(owner.name) \(hostname)'.")
        }
        let (pin, withheld) = (stored.pin, stored.withheld)
        var changed = pin
        changed.window = window
        try requireWindowsNotEnded([changed], of: hostname)
        guard pin.window != window else {
            throw StoreError(.refused, "The pin \(pin.displayName) of \(hostname) already has \(window.map { "the publish window \($0)" } ?? "no publish window"). Nothing was changed.")
        }
        let listedBefore = try publishedPinCount(ofHost: hostID)
        let publish = window?.contains(now) ?? true
        try db.execute("""
            UPDATE pin SET window_not_before = ?, window_not_after = ?, withheld = ?,
                           published_version = CASE WHEN ? = 1 THEN NULL ELSE published_version END
            WHERE \(match)
            """, [StoredRows.storedSeconds(window?.notBefore), StoredRows.storedSeconds(window?.notAfter), Int64(publish ? 0 : 1),
                  Int64(publish && withheld ? 1 : 0), hostID, fingerprint.bytes, fingerprint.bytes])
        try requireScheduleKeepsHostPinned(hostID: hostID, hostname: hostname, customer: owner, listedBefore: listedBefore)
        let state = publish == !withheld ? "" : (publish ? "; listed from this version" : "; withheld from this version")
        let version = try recordChange(
            of: owner, .pinWindowChanged,
            "\(hostname): pin \(pin.displayName) publish window \(pin.window?.description ?? "none") -> \(window?.description ?? "none")\(state)"
                + (liveCheck.map { "; \($0.auditNote)" } ?? "") + (note.map { "; \($0)" } ?? "")
        )
        return PinChange(customer: owner.name, hostname: hostname, changed: pin.sortKey.map { [$0] } ?? [], skipped: [],
                         pinCount: try pinCount(ofHost: hostID), version: version)
    }

    /// Refuses a pin whose publish window has already ended: it would never be listed.
    func requireWindowsNotEnded(_ pins: [Pin], of hostname: Hostname) throws {
        for pin in pins {
            guard let end = pin.window?.notAfter, end <= now else { continue }
            throw StoreError(.refused, "The publish window of \(pin.displayName) for \(hostname) ends at \(PinWindow.format(end)), which is not after now (\(PinWindow.format(now))): the pin would never be listed. Nothing was changed. Give a later --not-after, or remove the pin with 'pinset pin remove'.")
        }
    }

    /// How many of the host's pins a pass at this change's time publishes.
    func publishedPinCount(ofHost hostID: Int64) throws -> Int {
        try pins(ofHost: hostID).count { $0.isPublished(at: now) }
    }

    /// Refuses (and so rolls back) a change after which the host's publish windows would, now or at a later
    /// window boundary, leave it without a published pin (it would stop being published: the rule `pin remove`
    /// applies to the last pin), or — for a customer serving legacy clients — lower the number of published pins
    /// they can use below two. The rules any edit is held to, applied to every time a window changes what a pass
    /// publishes, so that a scheduled change is refused when it is made rather than when it happens.
    /// `listedBefore`: how many pins a pass published just before the change.
    func requireScheduleKeepsHostPinned(hostID: Int64, hostname: Hostname, customer: CustomerRow, listedBefore: Int) throws {
        let schedule = PinSchedule(try pins(ofHost: hostID))
        guard schedule.pins.contains(where: { $0.window != nil }) else { return }
        if listedBefore > 0 && schedule.published(at: now).isEmpty {
            throw StoreError(.lastPinOfHost, "After this change no pin of \(hostname) would be published now, so the host would stop being published and apps would apply a covering include-subdomains parent's pins to it, or none. Nothing was changed. Keep a pin published (add one without a window first), or remove the host with 'pinset host remove'.")
        }
        for time in schedule.changes(after: now) {
            let before = schedule.published(at: time.addingTimeInterval(-1))
            let after = schedule.published(at: time)
            let leaving = before.filter { pin in !after.contains(pin) }.map(\.displayName).joined(separator: ", ")
            if after.isEmpty && !before.isEmpty {
                throw StoreError(.lastPinOfHost, "From \(PinWindow.format(time)), when \(leaving) leave\(before.count == 1 ? "s" : "") the bundle, no pin of \(hostname) would be published, so the host would stop being published. Nothing was changed. Give a replacement pin a window that begins by then (or none), or end the window later.")
            }
            guard customer.servesLegacyClients else { continue }
            let usableBefore = before.count { $0.isUsableByLegacyClients(at: time) }
            let usableAfter = after.count { $0.isUsableByLegacyClients(at: time) }
            if usableAfter < HostPins.minimumRecommendedPins && usableAfter < usableBefore {
                throw StoreError(.tooFewLegacyPins, "Customer '\(customer.name)' serves legacy GCX clients; from \(PinWindow.format(time)), when \(leaving.isEmpty ? "a pin" : leaving) leave\(before.count - after.count == 1 ? "s" : "") the bundle, \(hostname) would have \(usableAfter) published pin\(usableAfter == 1 ? "" : "s") they can use, fewer than \(HostPins.minimumRecommendedPins). Nothing was changed. Give a replacement certificate pin (--certificate, --from-host or --certificate-sha256) a window that begins by then, or end the window later.")
            }
        }
    }
}
