import Foundation

/// One customer's part of a server's status: what the dashboard's overview shows per customer and the admin API's
/// health view returns, read from the one ``ServerStatus`` the server builds for `/status`.
public struct CustomerHealth: Codable, Hashable, Sendable {
    public var customer: String
    /// Whether this server has a signed bundle of the customer to serve.
    public var served: Bool
    /// Why the last signing pass did not sign the customer; absent when it did.
    public var notSignedReason: String?
    /// Whether the server checks live chains at all; without it `hosts` is always empty.
    public var monitoringEnabled: Bool
    /// The customer's hosts whose live chain is not in state `matches`, worst first.
    public var hosts: [ServerStatus.Monitoring.Host]
    /// Of those, the hosts whose apps would refuse the connection now.
    public var failingHosts: Int
    /// The latest content version served, and the share of this instance's fetches in the uptake window that
    /// reported it; absent without fetches.
    public var latestVersion: Int64?
    public var shareOnLatest: Double?
    public var fetches: Int
    /// Pin-failure reports counted in the last hour; absent when the reports listener is off.
    public var failuresLastHour: Int?
    /// The identity that signs the customer: its own, or else the default.
    public var signingIdentity: ServerStatus.IdentityExpiry?
    /// Edits of this customer applied without review and not yet acknowledged.
    public var breakGlass: [ServerStatus.BreakGlass]

    /// Whether anything needs an admin's attention.
    public var needsAttention: Bool {
        failingHosts > 0 || notSignedReason != nil || !breakGlass.isEmpty || (failuresLastHour ?? 0) > 0
            || signingIdentity.map { $0.signerExpiresSoon || $0.rootExpiresSoon } == true
    }
}

extension ServerStatus {
    public func health(of customer: String) -> CustomerHealth {
        health(of: [customer])[customer]!
    }

    /// The health of each of `customers`, reading the status once: the monitor's hosts are grouped by customer
    /// first, so an overview of many customers costs one pass over them.
    public func health(of customers: [String]) -> [String: CustomerHealth] {
        let hostsByCustomer = Dictionary(grouping: monitoring?.hosts ?? [], by: \.customer)
        let notSigned = Dictionary((customersNotSigned ?? []).map { ($0.customer, $0) }, uniquingKeysWith: { first, _ in first })
        let breakGlassByCustomer = Dictionary(grouping: breakGlass ?? [], by: \.customer)
        let ownIdentities = Dictionary(signingIdentities.compactMap { identity in identity.customer.map { ($0, identity) } }, uniquingKeysWith: { first, _ in first })
        let defaultIdentity = signingIdentities.first { $0.customer == nil }
        var result: [String: CustomerHealth] = [:]
        for customer in customers {
            let hosts = hostsByCustomer[customer] ?? []
            let uptake = uptake?.customers[customer]
            result[customer] = CustomerHealth(
                customer: customer,
                served: notSigned[customer].map(\.servingOlderBundle) ?? true,
                notSignedReason: notSigned[customer]?.reason,
                monitoringEnabled: monitoring?.enabled ?? false,
                hosts: hosts,
                failingHosts: hosts.filter(\.failing).count,
                latestVersion: uptake?.latestVersion,
                shareOnLatest: uptake?.shareOnLatest,
                fetches: uptake?.fetches ?? 0,
                failuresLastHour: reports?.enabled == true ? (reports?.failuresLastHour?[customer] ?? 0) : nil,
                signingIdentity: ownIdentities[customer] ?? defaultIdentity,
                breakGlass: breakGlassByCustomer[customer] ?? []
            )
        }
        return result
    }
}
