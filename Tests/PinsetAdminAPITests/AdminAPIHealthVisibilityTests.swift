import Foundation
import PinsetAdmin
import PinsetAdminAPI
import PinsetAdminContract
import PinsetLiveCheck
import PinsetStatus
import Testing

/// A customer's health through the API: an operator reads the monitor's and the signing pass's own words; a viewer
/// of the customer reads that a host could not be checked, or that the customer was not signed, without the
/// addresses a host's name resolved to, what its port did, or the server's file paths.
@Suite struct AdminAPIHealthVisibilityTests {
    static let internalAddress = "10.20.30.40"
    static let keyPath = "/srv/pinset/customers/acme/signing-key.pem"

    /// What the server's status says after a monitoring pass met an editor's host pointed at an internal address.
    static func status() throws -> ServerStatus {
        try ServerStatus.decode(Data("""
        {"ready": true, "customers": 2, "consecutiveSigningFailures": 1, "signingIdentities": [], "warnings": [],
         "customersNotSigned": [{"customer": "acme", "signer": "own", "reason": "cannot read \(keyPath): permission denied", "servingOlderBundle": true}],
         "monitoring": {"enabled": true, "hosts": [
           {"customer": "acme", "hostname": "api.example.com", "port": 8443, "state": "unreachable", "failing": true,
            "detail": "api.example.com resolves to \(internalAddress), a private (RFC 1918) address", "warnings": [], "since": "2026-11-28T00:00:00Z"},
           {"customer": "acme", "hostname": "www.example.com", "port": 443, "state": "matches-nothing", "failing": true,
            "detail": "live: leaf AAAA", "warnings": [], "since": "2026-11-28T00:00:00Z"}]}}
        """.utf8))
    }

    @Test func aViewerReadsThatAHostFailedButNotWhyAndTheOperatorReadsWhy() async throws {
        let deployment = try await AdminAPIInProcessTests.Deployment()
        defer { deployment.remove() }
        let status = try Self.status()
        let api = AdminAPI(admin: deployment.admin, status: { status })
        func health(as admin: String) async throws -> (text: String, document: CustomerHealth) {
            let token = deployment.tokens[admin]!
            let response = await api.respond(to: AdminAPIRequest(
                method: "GET", target: AdminOperation.customerHealth.target(["customer": "acme"], query: []),
                headers: [("Authorization", "Bearer \(token)")], body: [], remoteAddress: "127.0.0.1"))
            #expect(response.status == 200, "\(admin): \(String(decoding: response.body, as: UTF8.self))")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return (String(decoding: response.body, as: UTF8.self), try decoder.decode(CustomerHealth.self, from: Data(response.body)))
        }

        for admin in ["vera", "eddie"] {
            let seen = try await health(as: admin)
            #expect(!seen.text.contains(Self.internalAddress) && !seen.text.contains(Self.keyPath), "\(admin): \(seen.text)")
            let unreachable = try #require(seen.document.hosts.first { $0.hostname == "api.example.com" })
            #expect(unreachable.failing && unreachable.detail == LiveChainError.withoutDetail(endpoint: "api.example.com:8443"), "\(unreachable.detail)")
            #expect(seen.document.hosts.first { $0.hostname == "www.example.com" }?.detail == "live: leaf AAAA", "other states are the pins' own business")
            #expect(seen.document.notSignedReason?.contains("An operator can read why") == true && seen.document.failingHosts == 2)
        }
        let operatorView = try await health(as: "olga")
        #expect(operatorView.text.contains(Self.internalAddress) && operatorView.text.contains(Self.keyPath), "\(operatorView.text)")
    }
}
