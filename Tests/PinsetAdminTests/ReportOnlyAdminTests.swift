import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetStore
import Testing

/// Who may switch a host to report-only, and with what: an operator (named or the local one) with a reason, within
/// the server's maximum; an editor only where the customer requires review, as a request a reviewer approves;
/// ending a window early is an editor's.
@Suite struct ReportOnlyAdminTests {
    @Test func onlyAnOperatorSetsAWindowWithAReasonWithinTheMaximumAndAnEditorMayEndIt() throws {
        let (fixture, acme, host, eddie, olga) = try AdminPrincipalTests.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        let now = Int64(Date().timeIntervalSince1970)

        // The operator not without a reason, nor beyond the server's maximum; nor the editor of a customer that
        // does not require review, whose request no reviewer would see. None of it changes anything.
        #expect(throws: StoreError.self) { try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "", by: .admin(olga)) }
        #expect(throws: StoreError.self) {
            try admin.setReportOnly(host, of: acme, until: now + 7200, reason: "renewal", maximumSeconds: 3600, by: .admin(olga))
        }
        try admin.setRequiresReview(false, for: acme, by: admin.localOperator)
        let dumpUnreviewed = try fixture.dump()
        let refused = #expect(throws: AdminError.self) { try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "renewal", by: .admin(eddie)) }
        #expect(refused?.kind == .refused && refused?.description.contains("an operator may, or an editor where the customer requires review") == true,
                "\(refused?.description ?? "")")
        #expect(try fixture.dump() == dumpUnreviewed, "a refused operation changes nothing")
        try admin.setRequiresReview(true, for: acme, by: admin.localOperator)

        guard case .applied(let version) = try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "renewal served an unpinned key", by: .admin(olga)) else {
            Issue.record("an operator's window is set at once")
            return
        }
        #expect(try admin.pinSet(of: acme, visibleTo: .admin(eddie)).version == version)
        let windows = try admin.reportOnlyWindows(of: acme, visibleTo: .admin(eddie))
        #expect(windows.map(\.hostname) == [host] && windows.first?.setBy == "olga")
        #expect(try admin.pinSet(of: acme, visibleTo: .admin(eddie)).hosts.first?.reportOnlyUntil == now + 3600)

        #expect(try admin.endReportOnly(host, of: acme, reason: "fixed", by: .admin(eddie)) != nil)
        #expect(try admin.reportOnlyWindows(of: nil, visibleTo: .admin(olga)).isEmpty)
        let entries = try admin.auditLog(of: acme, visibleTo: admin.localOperator, limit: 2)
        #expect(entries.map(\.action) == [.reportOnlyEnded, .reportOnlySet] && entries.map(\.actor) == ["eddie", "olga"])
    }

    /// The editor of a customer that requires review asks; the window is set only when another admin with the
    /// reviewer role approves, bounded from the approval, and the audit log names both.
    @Test func anEditorsRequestSetsTheWindowOnlyWhenAReviewerApprovesIt() async throws {
        let (fixture, acme, host, eddie, olga) = try AdminPrincipalTests.reviewedCustomer()
        defer { fixture.remove() }
        let admin = fixture.admin
        try admin.addAdmin("rita", grants: [AdminGrant(role: .reviewer, customer: acme)], by: admin.localOperator)
        let rita = try #require(try admin.admins(visibleTo: admin.localOperator).first { $0.name == "rita" })
        let now = Int64(Date().timeIntervalSince1970)

        // Beyond the maximum is refused when asked, storing nothing.
        let dumpBefore = try fixture.dump()
        #expect(throws: StoreError.self) {
            try admin.setReportOnly(host, of: acme, until: now + 7200, reason: "renewal", maximumSeconds: 3600, by: .admin(eddie))
        }
        #expect(try fixture.dump() == dumpBefore)

        guard case .requested(let request) = try admin.setReportOnly(host, of: acme, until: now + 3600, reason: "renewal served an unpinned key, INC-4711", by: .admin(eddie)) else {
            Issue.record("an editor's window waits for review")
            return
        }
        #expect(request.author == "eddie" && request.edits == [PinEdit(hostname: host, operation: .setReportOnly(until: now + 3600))])
        #expect(request.expiresAt.timeIntervalSince1970 <= TimeInterval(now + 3600 + 1), "the request lapses when the window would have ended")
        #expect(try admin.reportOnlyWindows(of: acme, visibleTo: .admin(olga)).isEmpty, "nothing is set before review")
        let versionBefore = try admin.pinSet(of: acme, visibleTo: .admin(olga)).version

        // Not by its author, nor by an editor without the reviewer role.
        await #expect(throws: AdminError.self) { try await admin.approve(request.id, by: eddie, liveCheck: { _ in LiveCheckSettings() }) }
        let approved = try await admin.approve(request.id, by: rita, liveCheck: { _ in LiveCheckSettings() })
        #expect(approved.state == .applied)
        let windows = try admin.reportOnlyWindows(of: acme, visibleTo: .admin(olga))
        #expect(windows.map(\.hostname) == [host] && windows.first?.setBy == "eddie" && windows.first?.until == now + 3600)
        #expect(windows.first?.reason == "renewal served an unpinned key, INC-4711")
        let pinSet = try admin.pinSet(of: acme, visibleTo: .admin(olga))
        #expect(pinSet.version > versionBefore && pinSet.hosts.first?.reportOnlyUntil == now + 3600)
        let set = try #require(try admin.auditLog(of: acme, visibleTo: admin.localOperator, limit: 5).first { $0.action == .reportOnlySet })
        #expect(set.actor == "rita" && set.details.contains("approved by rita"), "\(set.details)")
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
