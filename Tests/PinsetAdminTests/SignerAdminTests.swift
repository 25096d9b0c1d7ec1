import Foundation
import PinsetAdmin
import PinsetCore
import PinsetStore
import Testing

/// Installing signers and raising the revocation floor, applied without the CLI.
@Suite struct SignerAdminTests {
    @Test func installingWithoutAPendingKeySaysHowToMakeOne() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let error = #expect(throws: AdminError.self) {
            try fixture.admin.installSigner(certificatePath: fixture.temporary.file("issued.pem"), customer: nil)
        }
        #expect(error?.description.contains("pinset signer request") == true, "\(error?.description ?? "")")
    }

    @Test func aFloorAboveTheInstalledSignerIsRefusedAndChangesNothing() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        try fixture.admin.addCustomer(try CustomerName("acme"), servesLegacyClients: false, by: fixture.admin.localOperator)
        let dumpBefore = try fixture.dump()
        let farFuture = Int64(Date().timeIntervalSince1970) + 86_400 * 365
        let error = #expect(throws: AdminError.self) {
            try fixture.admin.raiseRevocationFloor(customer: nil, to: farFuture, by: fixture.admin.localOperator)
        }
        #expect(error?.description.contains("later than the notBefore") == true, "\(error?.description ?? "")")
        #expect(try fixture.dump() == dumpBefore)
        #expect(try fixture.store.signersNotBefore(of: nil) == nil)

        let change = try fixture.admin.raiseRevocationFloor(customer: nil, to: nil, by: fixture.admin.localOperator)
        #expect(change.floor == change.installedSignerNotBefore)
        #expect(change.customersWithNewVersion.map(\.rawValue) == ["acme"])
        #expect(try fixture.store.signersNotBefore(of: nil) == change.floor)
    }

    @Test func aCustomerOnTheDefaultIdentityHasNoSignerOfItsOwn() throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        try fixture.admin.addCustomer(try CustomerName("acme"), servesLegacyClients: false, by: fixture.admin.localOperator)
        #expect(throws: AdminError.self) { try fixture.admin.signerTarget(customer: "acme") }
        #expect(try fixture.admin.signerTarget(customer: nil).files.keyPath == fixture.dataDirectory.keyPath)
    }

    @Test func revocationFloorsAreUnixSecondsOrISO8601From1970() throws {
        #expect(try Admin.parseRevocationFloor("1700000000") == 1_700_000_000)
        #expect(try Admin.parseRevocationFloor("2026-11-23T12:00:00Z") == 1_795_435_200)
        #expect(throws: AdminError.self) { try Admin.parseRevocationFloor("-5") }
        #expect(throws: AdminError.self) { try Admin.parseRevocationFloor("yesterday") }
    }
}
