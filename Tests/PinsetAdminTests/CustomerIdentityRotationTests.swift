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
