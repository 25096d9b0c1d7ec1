import Foundation
import PinsetAdmin
import PinsetCore
import PinsetSigning
import PinsetStore
import Testing

/// The rules of giving a customer a new own identity, applied without the CLI.
@Suite struct CustomerIdentityRotationTests {
    let acme = try! CustomerName("acme")

    @Test func aNewTrustAnchorIsRefusedUnlessTheAppsAlreadyEmbedIt() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let first = try AdminFixture.identity("acme first")
        let files = try #require(try fixture.admin.addCustomer(acme, servesLegacyClients: false, ownIdentity: first, by: fixture.admin.localOperator))
        let keyBefore = fixture.bytes(files.keyPath)
        let dumpBefore = try fixture.dump()

        let second = try AdminFixture.identity("acme second")
        #expect(throws: AdminError.self) {
            try fixture.admin.rotateCustomerIdentity(of: acme, to: second, replaceTrustAnchor: false, by: fixture.admin.localOperator)
        }
        #expect(fixture.bytes(files.keyPath) == keyBefore, "the refused identity must not reach the key file")
        #expect(try fixture.dump() == dumpBefore, "the refused identity must not change the database")

        try fixture.admin.rotateCustomerIdentity(of: acme, to: second, replaceTrustAnchor: true, by: fixture.admin.localOperator)
        let report = try fixture.admin.customerIdentity(of: acme)
        #expect(report.identity?.certificateDER == second.certificateDER)
        #expect(report.problem == nil)
        // The replaced files are kept beside the new ones.
        #expect(fixture.bytes(files.keyPath + ".previous") == keyBefore)
        #expect(try fixture.store.auditLog(customer: acme).contains { $0.actor == "admin-test" && $0.details.contains("acme second") })
    }

    /// A generated key is always a new anchor: the certificate the refusal hands out for the apps must be the one
    /// the confirmed rotation installs, not a second key made on the spot.
    @Test func aGeneratedKeyIsKeptPendingAndTheConfirmedRotationInstallsThatSameKey() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        try fixture.admin.addCustomer(acme, servesLegacyClients: false, by: fixture.admin.localOperator)
        let dumpBefore = try fixture.dump()
        func rotate(_ keyType: SigningKeyType, replace: Bool) throws -> SigningIdentity {
            try fixture.admin.rotateCustomerIdentity(
                of: acme, keyType: keyType, commonName: nil, validityDays: 30, replaceTrustAnchor: replace, by: fixture.admin.localOperator)
        }
        func shownCertificate() throws -> String {
            let error = try #require(#expect(throws: AdminError.self) { try rotate(.p256, replace: false) })
            #expect(error.code == .trustAnchorPending)
            #expect(error.description.contains("--replace-trust-anchor") && !error.description.contains("\\n"), "one line of text, then the certificate")
            return try #require(error.description.split(separator: "\n").last.map(String.init))
        }

        let shown = try shownCertificate()
        #expect(try fixture.dump() == dumpBefore, "a pending key changes nothing stored")
        #expect(try fixture.admin.customerIdentity(of: acme).signer == .deploymentDefault)
        let pendingKey = fixture.dataDirectory.signingIdentityLocations.directory(of: acme) + "/pending/signing-key.pem"
        var status = stat()
        #expect(stat(pendingKey, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(try shownCertificate() == shown, "asking again shows the same pending certificate")
        for replace in [true, false] {
            #expect(throws: AdminError.self, "another key type while one is pending, replace: \(replace)") { try rotate(.p384, replace: replace) }
        }
        #expect(try shownCertificate() == shown, "a refused call for another key type leaves the pending key as it was")

        let installed = try rotate(.p256, replace: true)
        #expect(Base64.encode(installed.anchorDER) == shown)
        let report = try fixture.admin.customerIdentity(of: acme)
        #expect(report.signer == .customerOwn && report.identity?.certificateDER == installed.certificateDER && report.problem == nil)
        #expect(!FileManager.default.fileExists(atPath: pendingKey), "the installed key lives on only as the customer's own")

        // A retry of the installing call finds nothing pending: refused, never another key in place of the one installed.
        let dumpInstalled = try fixture.dump()
        let retried = try #require(#expect(throws: AdminError.self) { try rotate(.p256, replace: true) })
        #expect(retried.code == .trustAnchorPending && retried.description.contains("No key of 'acme' is pending"))
        #expect(try fixture.dump() == dumpInstalled)
        #expect(try fixture.admin.customerIdentity(of: acme).identity?.certificateDER == installed.certificateDER)
    }

    @Test func aCustomerOnTheDefaultIdentityReportsTheDefaultFiles() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        try fixture.admin.addCustomer(acme, servesLegacyClients: false, by: fixture.admin.localOperator)
        let report = try fixture.admin.customerIdentity(of: acme)
        #expect(report.signer == .deploymentDefault)
        #expect(report.keyFile == fixture.dataDirectory.keyPath)
        #expect(report.identity != nil && report.problem == nil)
    }

    @Test func aFailedDatabaseChangePutsThePreviousFilesBack() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let files = fixture.dataDirectory.defaultIdentityFiles
        let before = files.paths.map(fixture.bytes)
        struct DatabaseDown: Error {}
        #expect(throws: DatabaseDown.self) {
            try files.replace(with: try AdminFixture.identity("never installed")) { throw DatabaseDown() }
        }
        #expect(files.paths.map(fixture.bytes) == before)
        #expect(files.paths.allSatisfy { !FileManager.default.fileExists(atPath: $0 + ".new") })
    }

    @Test func aNewCustomerNeverTakesOverAKeyDirectoryLeftBehind() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let leftover = fixture.dataDirectory.signingIdentityLocations.directory(of: acme)
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: true)
        let dumpBefore = try fixture.dump()
        #expect(throws: AdminError.self) {
            try fixture.admin.addCustomer(acme, servesLegacyClients: false, ownIdentity: try AdminFixture.identity("acme"), by: fixture.admin.localOperator)
        }
        #expect(try fixture.dump() == dumpBefore)
    }
}
