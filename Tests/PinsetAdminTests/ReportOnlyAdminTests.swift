import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetStore
import Testing

/// Who may switch a host to report-only, and with what: an operator (named or the local one) with a reason, within
/// the server's maximum; an editor alone never, review or not; ending a window early is an editor's.
@Suite struct ReportOnlyAdminTests {
    @Test func onlyAnOperatorSetsAWindowWithAReasonWithinTheMaximumAndAnEditorMayEndIt() throws {
        let (fixture, acme, host, eddie, olga) = try AdminPrincipalTests.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        let now = Int64(Date().timeIntervalSince1970)
        let dumpBefore = try fixture.dump()

        // The editor of a customer that requires review cannot; the operator not without a reason, nor beyond
        // the server's maximum. None of it changes anything.
        let refused = #expect(throws: AdminError.self) {
            try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "renewal", by: .admin(eddie))
        }
        #expect(refused?.kind == .forbidden && refused?.description.contains("only an operator") == true, "\(refused?.description ?? "")")
        #expect(throws: StoreError.self) { try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "", by: .admin(olga)) }
        #expect(throws: StoreError.self) {
            try admin.setReportOnly(host, of: acme, until: now + 7200, reason: "renewal", maximumSeconds: 3600, by: .admin(olga))
        }
        #expect(try fixture.dump() == dumpBefore, "a refused operation changes nothing")
        // Nor can the editor of a customer that does not require review: an editor alone never can.
        try admin.setRequiresReview(false, for: acme, by: admin.localOperator)
        #expect(throws: AdminError.self) { try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "renewal", by: .admin(eddie)) }
        try admin.setRequiresReview(true, for: acme, by: admin.localOperator)

        try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "renewal served an unpinned key", by: .admin(olga))
        let windows = try admin.reportOnlyWindows(of: acme, visibleTo: .admin(eddie))
        #expect(windows.map(\.hostname) == [host] && windows.first?.setBy == "olga")
        #expect(try admin.pinSet(of: acme, visibleTo: .admin(eddie)).hosts.first?.reportOnlyUntil == now + 3600)

        #expect(try admin.endReportOnly(host, of: acme, reason: "fixed", by: .admin(eddie)) != nil)
        #expect(try admin.reportOnlyWindows(of: nil, visibleTo: .admin(olga)).isEmpty)
        let entries = try admin.auditLog(of: acme, visibleTo: admin.localOperator, limit: 2)
        #expect(entries.map(\.action) == [.reportOnlyEnded, .reportOnlySet] && entries.map(\.actor) == ["eddie", "olga"])
    }

    @Test func theEndIsADurationOrAnISO8601TimeWithAZone() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try Admin.parseReportOnlyEnd("12h", now: now) == 1_800_043_200)
        #expect(try Admin.parseReportOnlyEnd("90m", now: now) == 1_800_005_400)
        #expect(try Admin.parseReportOnlyEnd("2027-01-15T14:00:00Z", now: now) == 1_800_021_600)
        for bad in ["", "12", "h", "-3h", "12 h", "2027-01-15T14:00:00", "tomorrow"] {
            #expect(throws: AdminError.self, "\(bad)") { try Admin.parseReportOnlyEnd(bad, now: now) }
        }
    }
}
