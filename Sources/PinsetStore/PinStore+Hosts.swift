import Foundation
import PinsetCore

extension PinStore {
    /// Adds a host to a customer, with `pins` (possibly none) in the same transaction.
    ///
    /// A host without pins is listed but pins nothing; add its pins next with `addPins`. A customer that serves
    /// legacy clients cannot have such a host: those clients refuse every connection to a listed host none of
    /// whose pins they can use, so the host must come with at least two such pins.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostExists` (a bundle carries one entry per host name),
    ///   `.invalidInput` for port 0 or a pin whose key does not hash to it, or `.tooFewLegacyPins`.
    ///
    /// `liveCheckNote`, when given, is appended to the audit entry: what the pins were checked against.
    public func addHost(_ hostname: Hostname, port: UInt16 = 443, includeSubdomains: Bool = false, pins: [Pin] = [], to customer: CustomerName, liveCheckNote: String? = nil, actor: String) throws {
        try Self.validate(port: port, hostname: hostname)
        try Self.validateKeyMaterial(pins, of: hostname)
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            if let existing = try change.existingHost(hostname, of: owner) {
                throw StoreError(.hostExists, "Customer '\(owner.name)' already has host '\(hostname)' (port \(existing.host.port), include-subdomains \(Self.onOff(existing.host.includeSubdomains))). Change its settings with 'pinset host update' or remove it first.")
            }
            // The spelling is kept only when it differs, so a lower-case name has one stored form.
            let hostID = try db.insertReturningID("""
                INSERT INTO host (customer_id, hostname, published_hostname, port, include_subdomains, created_at) VALUES (?, ?, ?, ?, ?, ?)
                """, [owner.id, hostname.rawValue, hostname.hasMixedCase ? hostname.spelling : nil, Int64(port), includeSubdomains, change.now])
            try change.requireWindowsNotEnded(pins, of: hostname)
            var seen = Set<String>()
            let added = pins.filter { seen.insert($0.displayName).inserted }
            for pin in added { try Self.insert(pin, hostID: hostID, at: change.now, db) }
            try change.requireLegacyBackup(ofHost: hostID, hostname: hostname, customer: owner, edit: .newHost)
            try change.requireScheduleKeepsHostPinned(hostID: hostID, hostname: hostname, customer: owner, listedBefore: 0)
            let spelling = hostname.hasMixedCase ? " (published as \(hostname.spelling))" : ""
            var details = "added host \(hostname)\(spelling) port \(port), include-subdomains \(Self.onOff(includeSubdomains))"
            if !added.isEmpty {
                details += " with \(added.count) pin(s): " + added.map { "\($0.displayName) (\($0.label.isEmpty ? "no label" : $0.label); \($0.source.storedForm)\($0.window.map { "; publish window \($0)" } ?? ""))" }.joined(separator: ", ")
            }
            if let liveCheckNote { details += "; " + liveCheckNote }
            try change.recordChange(of: owner, .hostAdded, details)
        }
    }

    /// Changes the port and/or include-subdomains flag of a host; `nil` keeps the current value.
    ///
    /// - Returns: `false` when the host already had these settings: then nothing is written, and neither the
    ///   version nor the change counter moves.
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, or `.invalidInput` for port 0.
    @discardableResult
    public func updateHost(_ hostname: Hostname, of customer: CustomerName, port: UInt16? = nil, includeSubdomains: Bool? = nil, liveCheck: LiveCheckRecord? = nil, actor: String) throws -> Bool {
        if let port { try Self.validate(port: port, hostname: hostname) }
        return try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            let (hostID, current) = try change.host(hostname, of: owner)
            try change.requireUnchanged(hostID: hostID, current: current, since: liveCheck)
            let newPort = port ?? current.port
            let newIncludeSubdomains = includeSubdomains ?? current.includeSubdomains
            var differences: [String] = []
            if newPort != current.port { differences.append("port \(current.port) -> \(newPort)") }
            if newIncludeSubdomains != current.includeSubdomains {
                differences.append("include-subdomains \(Self.onOff(current.includeSubdomains)) -> \(Self.onOff(newIncludeSubdomains))")
            }
            guard !differences.isEmpty else { return false }
            try db.execute("UPDATE host SET port = ?, include_subdomains = ? WHERE id = ?",
                           [Int64(newPort), newIncludeSubdomains, hostID])
            if let liveCheck { differences.append(liveCheck.auditNote) }
            try change.recordChange(of: owner, .hostUpdated, "\(hostname): " + differences.joined(separator: "; "))
            return true
        }
    }

    /// Removes a host and its pins from a customer.
    ///
    /// Removing a customer's last host publishes an empty pin set, and apps replace (never merge) their pins
    /// with it, so they stop pinning every host of the customer at once; it is refused unless
    /// `allowRemovingLastHost` is true.
    ///
    /// - Throws: `StoreError.customerNotFound`, `.hostNotFound`, or `.lastHostOfCustomer`.
    public func removeHost(_ hostname: Hostname, from customer: CustomerName, allowRemovingLastHost: Bool = false, actor: String) throws {
        try database.write { db in
            let change = try ChangeRecorder(db, actor: actor, now: clock())
            let owner = try change.customer(customer)
            let (hostID, _) = try change.host(hostname, of: owner)
            let hostCount = try db.fetchValue(Int.self, "SELECT count(*) FROM host WHERE customer_id = ?", [owner.id]) ?? 0
            if hostCount == 1 && !allowRemovingLastHost {
                throw StoreError(.lastHostOfCustomer, "\(hostname) is the last host of '\(owner.name)'; removing it would publish an empty pin set, and apps replace their pins with it, so they would stop pinning every host of '\(owner.name)'. Add the customer's other hosts first, or pass --allow-last-host to do it anyway.")
            }
            let pinCount = try change.pinCount(ofHost: hostID)
            // Its pins go with it: ON DELETE CASCADE.
            try db.execute("DELETE FROM host WHERE id = ?", [hostID])
            try change.recordChange(of: owner, .hostRemoved, "removed host \(hostname) with \(pinCount) pin(s)")
        }
    }

    static func validate(port: UInt16, hostname: Hostname) throws {
        guard port != 0 else {
            throw StoreError(.invalidInput, "Port 0 is not a port a client can connect to. Give the TLS port of \(hostname), usually 443.")
        }
    }

    static func onOff(_ flag: Bool) -> String { flag ? "on" : "off" }
}
