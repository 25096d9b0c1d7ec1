import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetStatus
import PinsetStore

/// Reads on behalf of a principal: for a named admin, only customers it has a role for; the local operator sees
/// every customer.
extension Admin {
    public func customers(visibleTo viewer: AdminPrincipal) throws -> [CustomerSummary] {
        try store.customers().filter { viewer.mayView($0.name) }
    }

    public func customers(visibleTo viewer: AdminAccount) throws -> [CustomerSummary] {
        try customers(visibleTo: .admin(viewer))
    }

    public func pinSet(of customer: CustomerName, visibleTo viewer: AdminPrincipal) throws -> PinSet {
        guard viewer.mayView(customer), let pinSet = try store.pinSet(for: customer) else {
            switch viewer {
            case .localOperator: throw AdminError.noCustomer(customer)
            case .admin(let account): throw AdminError.noCustomer(customer, visibleTo: account.name)
            }
        }
        return pinSet
    }

    public func pinSet(of customer: CustomerName, visibleTo viewer: AdminAccount) throws -> PinSet {
        try pinSet(of: customer, visibleTo: .admin(viewer))
    }

    /// A customer's pins with what an admin reads beside them (`customer show`, `pin list`, `host list`).
    public func pinSetView(of customer: CustomerName, visibleTo viewer: AdminAccount) throws -> PinSetView {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try pinSetView(of: customer)
    }

    /// The newest `limit` audit entries of a customer, or of the whole deployment (`customer` nil: an operator's).
    public func auditLog(of customer: CustomerName?, visibleTo viewer: AdminPrincipal, limit: Int) throws -> [AuditEntry] {
        if let customer {
            if viewer.account != nil { _ = try pinSet(of: customer, visibleTo: viewer) }
        } else {
            try requireOperator(viewer, "read the audit log of the whole deployment")
        }
        return try store.auditLog(customer: customer, limit: limit)
    }

    public func auditLog(of customer: CustomerName, visibleTo viewer: AdminAccount, limit: Int) throws -> [AuditEntry] {
        try auditLog(of: customer, visibleTo: .admin(viewer), limit: limit)
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
    public func requiresReview(of customer: CustomerName, visibleTo viewer: AdminPrincipal) throws -> Bool {
        if let account = viewer.account, !account.mayView(customer) {
            throw AdminError.noCustomer(customer, visibleTo: account.name)
        }
        return try store.requiresReview(customer)
    }

    public func requiresReview(of customer: CustomerName, visibleTo viewer: AdminAccount) throws -> Bool {
        try requiresReview(of: customer, visibleTo: .admin(viewer))
    }

    /// Which identity signs a customer's bundles, and the customer's name as stored, for a viewer of the customer.
    public func signerAssignment(of customer: CustomerName, visibleTo viewer: AdminPrincipal) throws -> (customer: CustomerName, signer: SignerAssignment) {
        if viewer.account != nil { _ = try pinSet(of: customer, visibleTo: viewer) }
        let (stored, signer, _) = try store.signerAssignment(of: customer)
        return (stored, signer)
    }

    /// The live-chain checks of the hosts of `customer` (every customer `viewer` may see when nil), with the reason
    /// of each unmonitored host and the next keys of each: what `pinset check` runs.
    public func monitoringJobs(of customer: CustomerName?, visibleTo viewer: AdminPrincipal) throws -> [HostCheckJob] {
        let pinSets = if let customer {
            [try pinSet(of: customer, visibleTo: viewer)]
        } else {
            try store.allPinSets().filter { viewer.mayView($0.customer) }
        }
        return try HostCheckJob.jobs(for: pinSets, in: store)
    }

    /// What apps of a customer `viewer` may see reported failing in the last `window` seconds.
    public func pinFailureReport(of customer: CustomerName, visibleTo viewer: AdminAccount, window: Int64, now: Date = Date()) throws -> PinFailureOverview {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return try pinFailureReport(of: customer, window: window, now: now)
    }

    /// A customer's part of the running server's status (host health, uptake, reports, signer expiry), for an admin
    /// who may see the customer, as that admin may read it (``CustomerHealth/seen(by:)``).
    public func health(of customer: CustomerName, visibleTo viewer: AdminAccount, in status: ServerStatus) throws -> CustomerHealth {
        _ = try pinSet(of: customer, visibleTo: viewer)
        return status.health(of: customer.rawValue).seen(by: viewer)
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
        guard let pinSet = try store.pinSet(for: customer) else { throw AdminError.noCustomer(customer) }
        var unmonitored: [Hostname: String] = [:]
        for host in try store.unmonitoredHosts(of: customer) { unmonitored[host.hostname] = host.reason }
        return PinSetView(pinSet: pinSet, requiresReview: try store.requiresReview(customer), rotation: try store.rotationHosts(of: customer), unmonitoredReasons: unmonitored)
    }
}

extension HostCheckJob {
    /// The checks of `pinSets`' hosts, with the stored reason of each unmonitored one and the next keys of each:
    /// what the server's monitor and `pinset check` run.
    public static func jobs(for pinSets: [PinSet], in store: PinStore) throws -> [HostCheckJob] {
        let reasons = Dictionary(try store.unmonitoredHosts().map { ("\($0.customer.rawValue)\u{0}\($0.hostname.rawValue)", $0.reason) }, uniquingKeysWith: { first, _ in first })
        let next = try store.nextKeys()
        return jobs(for: pinSets, unmonitoredReason: { customer, hostname in
            reasons["\(customer.rawValue)\u{0}\(hostname.rawValue)"]
        }, nextKeys: { customer, hostname in
            next[customer]?[hostname] ?? []
        })
    }
}
