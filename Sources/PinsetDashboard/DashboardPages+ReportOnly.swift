import Foundation
import PinsetAdmin
import PinsetStore

extension DashboardPages {
    /// The hosts whose pins Pinset clients do not enforce now, on every page that shows their customers: until
    /// the window ends, nobody looking at the dashboard can miss one.
    static func reportOnlyBanner(_ windows: [ReportOnlyWindow]) -> HTML {
        guard !windows.isEmpty else { return "" }
        let items: [HTML] = windows.map { window in
            """
            <li data-report-only="\(window.customer.rawValue)/\(window.hostname.rawValue)"><a href="/dashboard/customers/\(window.customer.rawValue)">\(window.customer.rawValue)</a>: \
            \(window.hostname.spelling) until \(AdminDocuments.date(window.untilDate)), set by \(window.setBy) at \(AdminDocuments.date(window.since)): \(window.reason)</li>
            """
        }
        return """
        <div class="banner bad" id="report-only"><strong>Report-only: Pinset clients report pin mismatches for these hosts but connect anyway until the window ends</strong> \
        (legacy GCX clients keep enforcing):<ul>\(items)</ul>
        End one early with <code>pinset host enforce CUSTOMER HOST</code>.</div>
        """
    }

    /// The mark beside a host in report-only mode.
    static func reportOnlyMark(_ until: Int64?) -> HTML {
        guard let until else { return "" }
        return "<br><span class=\"bad\">report-only until \(AdminDocuments.date(Date(timeIntervalSince1970: TimeInterval(until))))</span>"
    }
}
