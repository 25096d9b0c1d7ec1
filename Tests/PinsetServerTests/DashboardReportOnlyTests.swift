import Foundation
import PinsetCore
@testable import PinsetDashboard
import PinsetStore
import Testing

/// The dashboard's report-only banner: every host in its window, with its end, who set it and the reason (escaped:
/// an admin wrote it), and nothing at all when no host is report-only.
struct DashboardReportOnlyTests {
    @Test func theBannerNamesEveryWindowWithItsReasonEscaped() throws {
        let window = ReportOnlyWindow(
            customer: try CustomerName("acme"), hostname: try Hostname("api.example.com"), until: 1_800_003_600,
            reason: "renewal <script>alert(1)</script>", setBy: "olga", since: Date(timeIntervalSince1970: 1_800_000_000)
        )
        let banner = DashboardPages.reportOnlyBanner([window]).rendered
        #expect(banner.contains("data-report-only=\"acme/api.example.com\""))
        #expect(banner.contains("api.example.com until ") && banner.contains("set by olga"))
        #expect(banner.contains("renewal &lt;script&gt;alert(1)&lt;/script&gt;") && !banner.contains("<script>"))
        #expect(DashboardPages.reportOnlyBanner([]).rendered.isEmpty)
        #expect(DashboardPages.reportOnlyMark(1_800_003_600).rendered.contains("report-only until"))
        #expect(DashboardPages.reportOnlyMark(nil).rendered.isEmpty)
    }
}
