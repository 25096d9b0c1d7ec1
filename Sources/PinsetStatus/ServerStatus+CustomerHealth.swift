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
        let hosts = (monitoring?.hosts ?? []).filter { $0.customer == customer }
        let uptake = uptake?.customers[customer]
        return CustomerHealth(
            customer: customer,
            served: customersNotSigned?.first { $0.customer == customer }.map(\.servingOlderBundle) ?? true,
            notSignedReason: customersNotSigned?.first { $0.customer == customer }?.reason,
            monitoringEnabled: monitoring?.enabled ?? false,
            hosts: hosts,
            failingHosts: hosts.filter(\.failing).count,
            latestVersion: uptake?.latestVersion,
            shareOnLatest: uptake?.shareOnLatest,
            fetches: uptake?.fetches ?? 0,
            failuresLastHour: reports?.enabled == true ? (reports?.failuresLastHour?[customer] ?? 0) : nil,
            signingIdentity: signingIdentities.first { $0.customer == customer } ?? signingIdentities.first { $0.customer == nil },
            breakGlass: (breakGlass ?? []).filter { $0.customer == customer }
        )
    }
}
