import Foundation
import PinsetCore
import PinsetStatus
import PinsetStore

/// Reads on behalf of a named admin: only customers it has a role for.
extension Admin {
    public func customers(visibleTo viewer: AdminAccount) throws -> [CustomerSummary] {
        try store.customers().filter { viewer.mayView($0.name) }
    }

    public func pinSet(of customer: CustomerName, visibleTo viewer: AdminAccount) throws -> PinSet {
        guard viewer.mayView(customer), let pinSet = try store.pinSet(for: customer) else {
            throw AdminError("There is no customer '\(customer)' that \(viewer.name) may see.", kind: .notFound)
        }
        return pinSet
    }

    /// A customer's pins with what an admin reads beside them (`customer show`, `pin list`, `host list`).
    public func pinSetView(of customer: CustomerName, visibleTo viewer: AdminAccount) throws -> PinSetView {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try pinSetView(of: customer)
    }

    public func auditLog(of customer: CustomerName, visibleTo viewer: AdminAccount, limit: Int) throws -> [AuditEntry] {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try store.auditLog(customer: customer, limit: limit)
    }

    /// Whether each host of a customer `viewer` may see may switch to a next key now (`RotationGate`).
    /// Only `hostname` when given; with `key`, only whether that key may go live.
    public func rotationReadiness(
        of customer: CustomerName, hostname: Hostname? = nil, key: SHA256Fingerprint? = nil, visibleTo viewer: AdminAccount, gate: RotationGate, now: Date = Date()
    ) throws -> [RotationGate.Readiness] {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try rotationReadiness(customer: customer, hostname: hostname, key: key, gate: gate, now: now)
    }

    /// Rotation readiness of every host of every customer `viewer` may see, in one pass over the store.
    public func rotationReadiness(visibleTo viewer: AdminAccount, gate: RotationGate, now: Date = Date()) throws -> [CustomerName: [RotationGate.Readiness]] {
        Dictionary(grouping: try rotationReadiness(customer: nil, hostname: nil, key: nil, gate: gate, now: now).filter { viewer.mayView($0.customer) }, by: \.customer)
    }

    /// Whether edits of a customer `viewer` may see wait for a second admin.
    public func requiresReview(of customer: CustomerName, visibleTo viewer: AdminAccount) throws -> Bool {
        guard viewer.mayView(customer) else {
            throw AdminError("There is no customer '\(customer)' that \(viewer.name) may see.", kind: .notFound)
        }
        return try store.requiresReview(customer)
    }

    /// What apps of a customer `viewer` may see reported failing in the last `window` seconds.
    public func pinFailureReport(of customer: CustomerName, visibleTo viewer: AdminAccount, window: Int64, now: Date = Date()) throws -> PinFailureOverview {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try pinFailureReport(of: customer, window: window, now: now)
    }

    /// A customer's part of the running server's status (host health, uptake, reports, signer expiry), for an admin
    /// who may see the customer.
    public func health(of customer: CustomerName, visibleTo viewer: AdminAccount, in status: ServerStatus) throws -> CustomerHealth {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return status.health(of: customer.rawValue)
    }
}

/// A customer's pin set with the state an admin reads beside it: whether review is required, when each pin was
/// published and whether it is a next key, and which hosts are unmonitored.
public struct PinSetView: Sendable {
    public var pinSet: PinSet
    public var requiresReview: Bool
    public var rotation: [RotationHost]
    public var unmonitoredReasons: [Hostname: String]

    public init(pinSet: PinSet, requiresReview: Bool, rotation: [RotationHost], unmonitoredReasons: [Hostname: String]) {
        self.pinSet = pinSet
        self.requiresReview = requiresReview
        self.rotation = rotation
        self.unmonitoredReasons = unmonitoredReasons
    }
}

extension Admin {
    /// The view of a customer, on this host's database.
    ///
    /// - Throws: `AdminError` when the customer does not exist.
    public func pinSetView(of customer: CustomerName) throws -> PinSetView {
        guard let pinSet = try store.pinSet(for: customer) else {
            throw AdminError("Customer '\(customer)' does not exist. List customers with 'pinset customer list'.", kind: .notFound)
        }
        var unmonitored: [Hostname: String] = [:]
        for host in try store.unmonitoredHosts(of: customer) { unmonitored[host.hostname] = host.reason }
        return PinSetView(pinSet: pinSet, requiresReview: try store.requiresReview(customer), rotation: try store.rotationHosts(of: customer), unmonitoredReasons: unmonitored)
    }
}
