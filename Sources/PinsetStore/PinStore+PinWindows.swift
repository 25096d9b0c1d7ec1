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

/// A pin kept in the bundle past the end of its publish window: withdrawing it would have left its host listing
/// no pin of the chain it was last seen serving, which the listed pins match. Held until the host serves a key the
/// remaining pins match, an admin changes the pins or the window, or `holdEnds`, whichever comes first.
public struct HeldPinWindow: Sendable, Hashable {
    public var customer: CustomerName
    public var hostname: Hostname
    public var pin: Pin
    /// When the host monitor saw the chain that the remaining pins would not match.
    public var chainObservedAt: Date
    /// The window's end plus `PinStore.maximumPinWindowHold`: the pin leaves then whatever the host serves.
    public var holdEnds: Date
}

/// What a pass did with the publish windows due at its time.
public struct PinWindowPass: Sendable {
    public var transitions: [PinWindowTransition] = []
    public var held: [HeldPinWindow] = []

    public init(transitions: [PinWindowTransition] = [], held: [HeldPinWindow] = []) {
        self.transitions = transitions
        self.held = held
    }
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

    /// How long past its window's end a pin is held at most, however the host is seen serving: a hold keeps apps
    /// connecting through a rollback nobody planned for, but a retirement must still happen, and the chain a
    /// monitor sees is only what the network showed it (someone holding the retiring key and placed between the
    /// trust server and the host could show it that key).
    public static let maximumPinWindowHold: TimeInterval = 24 * 3600
    /// How old a monitor's observation of a host may be for a pass to hold a pin on it.
    public static let servedChainMaximumAge: TimeInterval = 3600

    /// Publishes the pins whose window has begun and withholds those whose window has ended, as a signing pass at
    /// `time` finds them: each customer whose listed pins change gets one new content version (logged and audited
    /// like an edit, by `pinWindowActor`), in one transaction. Reads only when no pin is due.
    ///
    /// A pin whose window ends is held (kept listed) when `servedChains` holds an observation of its host from the
    /// last `servedChainMaximumAge` that the host's listed pins match and the pins left after the change would
    /// not, for at most `maximumPinWindowHold` past the window's end. The pass names held pins in its result
    /// every time it runs; nothing is written for them.
    @discardableResult
    public func applyPinWindows(at time: Date, servedChains: ServedChains = ServedChains()) throws -> PinWindowPass {
        // Every pass asks; a read answers the common case without taking the write lock.
        let planned = try database.read { db in try PinWindowApplier.plan(at: time, servedChains: servedChains, db) }
        guard !planned.apply.isEmpty else { return PinWindowPass(held: planned.held) }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: Self.pinWindowActor, now: time)
            let plan = try PinWindowApplier.plan(at: time, servedChains: servedChains, db)
            return PinWindowPass(transitions: try PinWindowApplier.apply(plan.apply, change), held: plan.held)
        }
    }
}

/// The pass's side of publish windows.
enum PinWindowApplier {
    struct Due {
        var pinID: Int64
        var hostID: Int64
        var customerID: Int64
        var customer: CustomerName
        var hostname: Hostname
        var pin: Pin
        var entering: Bool
    }

    struct Plan {
        var apply: [Due]
        var held: [HeldPinWindow]
    }

    /// The pins whose listed state differs from what a pass at `time` publishes.
    static func due(at time: Date, _ db: any StoreConnection) throws -> [Due] {
        var decoder = StoredRows.PinDecoder()
        var found: [Due] = []
        try db.forEachRow("""
            SELECT pin.id, host.customer_id, coalesce(host.published_hostname, host.hostname), customer.name, \(StoredRows.pinColumns)
            FROM pin JOIN host ON pin.host_id = host.id JOIN customer ON customer.id = host.customer_id
            WHERE pin.window_not_before IS NOT NULL OR pin.window_not_after IS NOT NULL
            """, []) { row in
            let (hostID, pin, withheld) = try decoder.storedPin(row, at: 4)
            let published = pin.isPublished(at: time)
            guard published == withheld else { return }
            if isUndoingAnotherClock(pin, entering: published, at: time) { return }
            let stored: String = try row.decode(atIndex: 2)
            guard let hostname = try? Hostname(stored) else {
                throw StoreError(.corruptData, "The stored host name '\(stored)' is not valid. Fix or remove the row with the database's own tool (sqlite3 or psql).")
            }
            found.append(Due(pinID: try row.decode(atIndex: 0), hostID: hostID, customerID: try row.decode(atIndex: 1),
                             customer: try StoredRows.customerName(row.decode(atIndex: 3)), hostname: hostname, pin: pin, entering: published))
        }
        return found
    }

    /// How far apart the clocks of instances sharing a database may be for publish windows to move one way only.
    static let clockSkewAllowance: TimeInterval = 60

    /// Whether applying a due pin would undo what an instance whose clock is a little ahead just did: list again a pin
    /// whose window ends within the allowance, or withhold again one whose window begins within it. Without this,
    /// two instances whose clocks straddle a window's edge would flip the pin at every pass, each flip a new content
    /// version, audit entry and transparency-log entry. A window's edges are crossed one way only: a pin is listed
    /// from its start until the allowance before its end (a window shorter than that is never listed), and withheld
    /// from its end.
    static func isUndoingAnotherClock(_ pin: Pin, entering: Bool, at time: Date) -> Bool {
        guard let window = pin.window else { return false }
        if entering {
            guard let end = window.notAfter else { return false }
            return time >= end.addingTimeInterval(-clockSkewAllowance)
        }
        guard let start = window.notBefore, time < start else { return false }
        return time >= start.addingTimeInterval(-clockSkewAllowance)
    }

    /// The due pins to apply, and those to hold: the leaving pins of a host whose observed chain the listed pins
    /// match and the pins left after the change would not (see `PinStore.applyPinWindows`).
    static func plan(at time: Date, servedChains: ServedChains, _ db: any StoreConnection) throws -> Plan {
        let due = try due(at: time, db)
        guard !servedChains.isEmpty, due.contains(where: { !$0.entering }) else { return Plan(apply: due, held: []) }
        var plan = Plan(apply: [], held: [])
        for (hostID, items) in Dictionary(grouping: due, by: \.hostID).sorted(by: { $0.key < $1.key }) {
            let leaving = items.filter { !$0.entering }
            guard let first = items.first, !leaving.isEmpty,
                  let observation = servedChains.observation(of: first.hostname, of: first.customer, notBefore: time.addingTimeInterval(-PinStore.servedChainMaximumAge))
            else {
                plan.apply += items
                continue
            }
            let listed = try listedPins(ofHost: hostID, db)
            let leavingIDs = Set(leaving.map(\.pinID))
            let after = listed.filter { !leavingIDs.contains($0.id) }.map(\.pin) + items.filter(\.entering).map(\.pin)
            let matchesNow = !LiveChainCheck(pins: listed.map(\.pin), chain: observation.chain, now: time).fails
            let matchesAfter = !LiveChainCheck(pins: after, chain: observation.chain, now: time).fails
            guard matchesNow && !matchesAfter else {
                plan.apply += items
                continue
            }
            plan.apply += items.filter(\.entering)
            for item in leaving {
                let holdEnds = (item.pin.window?.notAfter ?? time).addingTimeInterval(PinStore.maximumPinWindowHold)
                if time < holdEnds {
                    plan.held.append(HeldPinWindow(customer: item.customer, hostname: item.hostname, pin: item.pin,
                                                   chainObservedAt: observation.observedAt, holdEnds: holdEnds))
                } else {
                    plan.apply.append(item)
                }
            }
        }
        return plan
    }

    /// The pins a pass lists for the host now, with their row ids.
    private static func listedPins(ofHost hostID: Int64, _ db: any StoreConnection) throws -> [(id: Int64, pin: Pin)] {
        var decoder = StoredRows.PinDecoder()
        return try db.fetchAll("SELECT pin.id, \(StoredRows.pinColumns) FROM pin WHERE pin.host_id = ? AND pin.withheld = 0", [hostID]) { row in
            (id: try row.decode(atIndex: 0), pin: try decoder.pin(row, at: 1).pin)
        }
    }

    static func apply(_ due: [Due], _ change: ChangeRecorder) throws -> [PinWindowTransition] {
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
