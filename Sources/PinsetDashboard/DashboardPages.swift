import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetStatus
import PinsetStore

/// The dashboard's pages, rendered from what the admin library and the server's status say. Rendering only: what
/// a page offers (an approve button, say) follows the same role predicates the actions themselves check.
enum DashboardPages {
    struct Context {
        let viewer: AdminAccount
        let csrfToken: String
    }

    /// Customers shown on the overview, those needing attention first; the others are reached by name.
    static let overviewRows = 200

    // MARK: Overview

    static func overview(
        _ context: Context, customers: [CustomerSummary], status: ServerStatus?, rotation: [CustomerName: [RotationGate.Readiness]],
        requests: [ChangeRequest], breakGlass: [BreakGlassEvent], reportOnly: [ReportOnlyWindow] = []
    ) -> HTML {
        let byName = (status?.health(of: customers.map(\.name.rawValue)) ?? [:]).mapValues { $0.seen(by: context.viewer) }
        let health = Dictionary(uniqueKeysWithValues: customers.map { ($0.name, byName[$0.name.rawValue]) })
        let pending = Dictionary(grouping: requests.filter { $0.state == .open }, by: \.customer)
        let ordered = customers.sorted { left, right in
            let leftAttention = health[left.name]??.needsAttention ?? false
            let rightAttention = health[right.name]??.needsAttention ?? false
            return leftAttention != rightAttention ? leftAttention : left.name.rawValue < right.name.rawValue
        }
        let shown = ordered.prefix(overviewRows)
        let rows: [HTML] = shown.map { summary in
            let state = health[summary.name] ?? nil
            let open = pending[summary.name]?.count ?? 0
            return """
            <tr class="\(state?.needsAttention == true ? "attention" : "")" data-customer="\(summary.name.rawValue)">
            <td><a href="/dashboard/customers/\(summary.name.rawValue)">\(summary.name.rawValue)</a></td>
            <td>\(summary.version)</td><td>\(summary.hostCount)</td><td>\(summary.pinCount)</td>
            <td>\(hostHealth(state))</td>
            <td>\(rotationSummary(rotation[summary.name] ?? []))</td>
            <td>\(uptake(state))</td>
            <td>\(failures(state))</td>
            <td>\(expiry(state?.signingIdentity.map { ($0.signerNotAfter, $0.signerExpiresSoon) }))</td>
            <td>\(expiry(state?.signingIdentity.map { ($0.rootNotAfter, $0.rootExpiresSoon) }))</td>
            <td>\(open > 0 ? HTML("<span class=\"warn\">\(open) open</span>") : HTML("<span class=\"muted\">none</span>"))</td>
            </tr>
            """
        }
        let more: HTML = customers.count > shown.count
            ? "<p class=\"muted\">Showing \(shown.count) of \(customers.count) customers, those needing attention first. Open another by its address: /dashboard/customers/NAME.</p>"
            : ""
        let server: HTML = if let status {
            status.ready ? "" : "<div class=\"banner bad\">This server is not ready: \(status.notReadyReason(seenBy: context.viewer) ?? "")</div>"
        } else {
            ""
        }
        return layout(context, title: "Customers", body: """
        \(breakGlassBanner(context, breakGlass))
        \(reportOnlyBanner(reportOnly))
        \(server)
        <h1>Customers</h1>
        \(scrolling("Customers", """
        <table id="customers">
        <thead><tr><th>Customer</th><th>Version</th><th>Hosts</th><th>Pins</th><th>Host health</th><th>Next keys</th>
        <th>Uptake of latest</th><th>Pin failures (1 h)</th><th>Signer expires</th><th>Root expires</th><th>Change requests</th></tr></thead>
        <tbody>\(rows)</tbody>
        </table>
        """))
        \(more)
        <h2>Open change requests</h2>
        \(requestTable(requests.filter { $0.state == .open }))
        """)
    }

    static func hostHealth(_ health: CustomerHealth?) -> HTML {
        guard let health else { return "<span class=\"muted\">no server status</span>" }
        guard health.monitoringEnabled else { return "<span class=\"muted\">not monitored</span>" }
        if health.failingHosts > 0 {
            return "<span class=\"bad\">\(health.failingHosts) failing</span>"
        }
        if !health.hosts.isEmpty {
            return "<span class=\"warn\">\(health.hosts.count) to watch</span>"
        }
        return "<span class=\"good\">all match</span>"
    }

    static func rotationSummary(_ hosts: [RotationGate.Readiness]) -> HTML {
        let safe = hosts.filter { $0.verdict == .safe }.count
        let waiting = hosts.filter { $0.verdict == .notYet }.count
        if safe + waiting == 0 { return "<span class=\"muted\">none pinned</span>" }
        return "\(safe > 0 ? HTML("<span class=\"good\">\(safe) ready</span> ") : "")\(waiting > 0 ? HTML("<span class=\"warn\">\(waiting) waiting</span>") : "")"
    }

    /// The share of fetches on the latest version; fetches that sent no version are counted, never hidden behind
    /// "no fetches" (legacy clients never send one).
    static func uptake(_ health: CustomerHealth?) -> HTML {
        guard let health else { return "<span class=\"muted\">no server status</span>" }
        if let share = health.shareOnLatest { return "\(RotationGate.percent(share)) of \(fetchCount(health.fetches))" }
        if health.fetches == 0 { return "<span class=\"muted\">no fetches</span>" }
        if health.latestVersion == nil { return "<span class=\"warn\">\(fetchCount(health.fetches)), no version served now</span>" }
        return "<span class=\"muted\">\(fetchCount(health.fetches)), none reported a version</span>"
    }

    static func fetchCount(_ fetches: Int) -> String {
        fetches == 1 ? "1 fetch" : "\(fetches) fetches"
    }

    /// A next-key verdict in words; the code stays in `data-verdict`.
    static func nextKey(_ verdict: RotationGate.Readiness.Verdict?) -> HTML {
        switch verdict {
        case .safe: "<span class=\"good\" data-verdict=\"safe\">a next key may go live now</span>"
        case .notYet: "<span class=\"warn\" data-verdict=\"not-yet\">next key pinned, not yet safe to go live</span>"
        case .noNextKey, nil: "<span class=\"muted\" data-verdict=\"no-next-key\">no next key pinned</span>"
        }
    }

    /// Whether the key a failing host served is a current pin, in words.
    static func keyPinned(_ state: PinFailureSummary.KeyPinned) -> HTML {
        switch state {
        case .yes: "yes"
        case .no: "<span class=\"bad\">no: not a current pin</span>"
        case .hostNotPinned: "<span class=\"muted\">host not pinned now</span>"
        case .noCertificate: "<span class=\"muted\">no certificate reported</span>"
        }
    }

    /// A table in a container that scrolls sideways on a narrow screen, so that the page itself never does;
    /// focusable, so that it scrolls from the keyboard too.
    static func scrolling(_ label: String, _ table: HTML) -> HTML {
        "<div class=\"table-scroll\" role=\"region\" aria-label=\"\(label)\" tabindex=\"0\">\(table)</div>"
    }

    static func failures(_ health: CustomerHealth?) -> HTML {
        guard let count = health?.failuresLastHour else { return "<span class=\"muted\">reports off</span>" }
        return count > 0 ? "<span class=\"bad\">\(count)</span>" : "0"
    }

    static func expiry(_ value: (Date, Bool)?) -> HTML {
        guard let (date, soon) = value else { return "<span class=\"muted\">-</span>" }
        let text = date.formatted(.iso8601.year().month().day())
        return soon ? "<span class=\"bad\">\(text) (renew)</span>" : "\(text)"
    }

    static func breakGlassBanner(_ context: Context, _ events: [BreakGlassEvent]) -> HTML {
        guard !events.isEmpty else { return "" }
        let items: [HTML] = events.map { event in
            // Offered to whoever may acknowledge it, except who applied it (the store refuses that too).
            let acknowledge: HTML = context.viewer.mayAcknowledge(event)
                ? """
                  <form class="inline" method="post" action="/dashboard/break-glass/\(event.id)/acknowledge">
                  <input type="hidden" name="csrf" value="\(context.csrfToken)">
                  <label for="acknowledge-note-\(event.id)">What you checked (goes to the audit log)</label>
                  <input type="text" id="acknowledge-note-\(event.id)" name="note" maxlength="\(AdminLimits.reasonLength)">
                  <button type="submit" class="secondary" id="acknowledge-\(event.id)">Acknowledge</button></form>
                  """
                : ""
            // 0: carried over by a restore, whose backup does not hold the request.
            let request: HTML = event.changeRequestID > 0
                ? "change request <a href=\"/dashboard/requests/\(event.changeRequestID)\">\(event.changeRequestID)</a>"
                : "a change request the restore did not keep"
            return "<li data-break-glass=\"\(event.id)\">\(request) of \(event.customer), applied without review by \(event.appliedBy) at \(AdminDocuments.date(event.appliedAt)): \(event.reason) \(acknowledge)</li>"
        }
        return """
        <div class="banner bad" id="break-glass"><strong>Applied without review, not yet acknowledged:</strong><ul>\(items)</ul>
        Another admin acknowledges each here or with <code>pinset review acknowledge ID</code>.</div>
        """
    }

    static func requestTable(_ requests: [ChangeRequest]) -> HTML {
        guard !requests.isEmpty else { return "<p class=\"muted\">None.</p>" }
        let rows: [HTML] = requests.map { request in
            """
            <tr data-request="\(request.id)"><td><a href="/dashboard/requests/\(request.id)">#\(request.id)</a></td><td>\(request.customer.rawValue)</td>
            <td>\(request.state.rawValue)</td><td>\(request.author)</td><td>\(request.reason)</td>
            <td>\(AdminDocuments.date(request.createdAt))</td><td>\(AdminDocuments.date(request.expiresAt))</td></tr>
            """
        }
        return scrolling("Change requests", """
        <table class="requests"><thead><tr><th>Request</th><th>Customer</th><th>State</th><th>Author</th><th>Reason</th><th>Opened</th><th>Expires</th></tr></thead>
        <tbody>\(rows)</tbody></table>
        """)
    }

    // MARK: One customer

    /// A pin's publish window, whether the bundle served lists it, and when that next changes; nothing without one.
    static func publishWindow(_ pin: Pin, listed: Bool) -> HTML {
        guard let window = pin.window else { return "" }
        let next = PinSchedule([pin]).nextChange(after: Date()).map { "; \(listed ? "leaves" : "enters") the bundle at \(PinWindow.format($0))" } ?? ""
        let text = "\(listed ? "listed" : "not listed"); publish window \(window.description)\(next)"
        return "<br><span class=\"muted\" data-window>\(text)</span>"
    }

    static func customer(
        _ context: Context, pinSet: PinSet, requiresReview: Bool, health: CustomerHealth?, rotation: [RotationGate.Readiness],
        reports: PinFailureOverview, requests: [ChangeRequest], breakGlass: [BreakGlassEvent], audit: [AuditEntry],
        reportOnly: [ReportOnlyWindow] = []
    ) -> HTML {
        let name = pinSet.customer.rawValue
        let hostStates = Dictionary((health?.hosts ?? []).map { ($0.hostname, $0) }, uniquingKeysWith: { first, _ in first })
        let verdicts = Dictionary(rotation.map { ($0.hostname, $0.verdict) }, uniquingKeysWith: { first, _ in first })
        let hosts: [HTML] = pinSet.hosts.map { host in
            let state: HTML = if let checked = hostStates[host.hostname.rawValue] {
                "<span class=\"\(checked.failing ? "bad" : "warn")\">\(checked.state)</span> since \(AdminDocuments.date(checked.since))<br><span class=\"muted\">\(checked.detail)</span>"
            } else if health?.monitoringEnabled == true {
                "<span class=\"good\">matches</span>"
            } else {
                "<span class=\"muted\">not monitored</span>"
            }
            let pins: [HTML] = host.pins.map { pin in "<div><code class=\"hash\">\(pin.displayName)</code> \(pin.label)\(publishWindow(pin, listed: true))</div>" }
                + host.scheduledPins.map { pin in
                    "<div class=\"scheduled\" data-scheduled-pin=\"\(pin.displayName)\"><code class=\"hash\">\(pin.displayName)</code> \(pin.label)\(publishWindow(pin, listed: false))</div>"
                }
            return """
            <tr data-host="\(host.hostname.rawValue)"><td>\(host.hostname.rawValue):\(Int(host.port))\(host.includeSubdomains ? " (and subdomains)" : "")\(reportOnlyMark(host.reportOnlyUntil))</td>
            <td>\(state)</td><td>\(nextKey(verdicts[host.hostname]))</td><td>\(pins)</td></tr>
            """
        }
        // One row per host, result and served key, then the reports that got no row of their own: together they
        // add up to every report counted.
        let reportRows: [HTML] = reports.rows.map { row in
            let served: HTML = row.leafSPKISHA256.map { "<code class=\"hash\">\($0)</code>" } ?? "<span class=\"muted\">none</span>"
            return """
            <tr data-report-host="\(row.hostname)"><td>\(row.hostname)</td><td>\(AdminDocuments.resultName(row.validationResult))</td><td>\(served)</td>
            <td>\(keyPinned(row.keyPinned))</td><td>\(row.reports)</td><td>\(AdminDocuments.date(row.lastHour))</td></tr>
            """
        } + reports.buckets.map { bucket in
            let what: HTML = bucket.bucket == PinFailureBucketSummary.unpublishedHost
                ? "<span class=\"muted\">hosts \(name) does not publish (no pins)</span>"
                : "<span class=\"muted\">other kinds, after an hour reached its row limit</span>"
            return """
            <tr data-report-bucket="\(bucket.bucket)"><td>\(what)</td><td>\(bucket.bucket)</td><td></td><td></td>
            <td>\(bucket.reports)</td><td>\(AdminDocuments.date(bucket.lastHour))</td></tr>
            """
        }
        let reportTotal = reports.rows.reduce(0) { $0 + $1.reports } + reports.buckets.reduce(0) { $0 + $1.reports }
        let auditRows: [HTML] = audit.map { entry in
            "<tr><td>\(AdminDocuments.date(entry.at))</td><td>\(entry.actor)</td><td>\(entry.action.rawValue)</td><td>\(entry.details)</td></tr>"
        }
        let identity: HTML = if let identity = health?.signingIdentity {
            "<dt>Signed by</dt><dd>\(identity.identity): signer until \(expiry((identity.signerNotAfter, identity.signerExpiresSoon))), root until \(expiry((identity.rootNotAfter, identity.rootExpiresSoon)))</dd>"
        } else {
            ""
        }
        let notSigned: HTML = health?.notSignedReason.map { "<div class=\"banner bad\">Not signed by the last pass: \($0)</div>" } ?? ""
        return layout(context, title: name, body: """
        \(breakGlassBanner(context, breakGlass))
        \(reportOnlyBanner(reportOnly))
        \(notSigned)
        <h1>\(name)</h1>
        <dl>
        <dt>Content version</dt><dd>\(pinSet.version)</dd>
        <dt>Review</dt><dd>\(requiresReview ? "every edit needs a second admin" : "edits apply at once")</dd>
        <dt>Uptake of latest</dt><dd id="uptake">\(uptake(health))</dd>
        <dt>Pin failures (1 h)</dt><dd id="failures-last-hour">\(failures(health))</dd>
        \(identity)
        </dl>
        <h2>Hosts</h2>
        \(scrolling("Hosts", "<table id=\"hosts\"><thead><tr><th>Host</th><th>Live chain</th><th>Next key</th><th>Pins</th></tr></thead><tbody>\(hosts)</tbody></table>"))
        <h2>Change requests</h2>
        \(requestTable(requests))
        <h2>Pin failures reported in the last 24 hours</h2>
        \(reportRows.isEmpty ? HTML("<p class=\"muted\">None.</p>") : scrolling("Pin failures", """
        <table id="reports"><thead><tr><th>Host</th><th>Result</th><th>Served key</th><th>Served key pinned now</th><th>Reports</th><th>Last hour</th></tr></thead>
        <tbody>\(reportRows)</tbody>
        <tfoot><tr><th colspan="4">All reports</th><td id="reports-total">\(reportTotal)</td><td></td></tr></tfoot></table>
        """))
        <h2>Recent changes</h2>
        \(scrolling("Recent changes", "<table><thead><tr><th>At</th><th>By</th><th>Action</th><th>Details</th></tr></thead><tbody>\(auditRows)</tbody></table>"))
        """)
    }

    // MARK: One change request

    static func changeRequest(
        _ context: Context, _ request: ChangeRequest, previews: [(hostname: Hostname, preview: HostEditPreview)], previewFailure: String?,
        notice: String?, refusal: DashboardRefusal?
    ) -> HTML {
        let viewer = context.viewer
        let isAuthor = request.author.lowercased() == viewer.name.lowercased()
        let hosts: [HTML] = previews.map { hostname, preview in
            let added: [HTML] = preview.edit.added.map { "<div class=\"added\">+ <code class=\"hash\">\($0.displayName)</code> \($0.label)</div>" }
            let removed: [HTML] = preview.edit.removed.map { "<div class=\"removed\">&minus; <code class=\"hash\">\($0.displayName)</code> \($0.label)</div>" }
            let outcome = preview.outcome
            return """
            <tr data-host="\(hostname.rawValue)"><td>\(hostname.rawValue)</td><td>\(added)\(removed)</td>
            <td class="\(outcome.permitsEdit ? "good" : "bad")">\(AdminDocuments.describe(outcome, toOperator: viewer.isOperator))</td></tr>
            """
        }
        let edits: [HTML] = request.edits.map { edit in
            switch edit.operation {
            case .addPins(let pins): "<li>\(edit.hostname.rawValue): add \(pins.map(\.displayName).joined(separator: ", "))</li>"
            case .removePin(let hash, _): "<li>\(edit.hostname.rawValue): remove \(hash.base64)</li>"
            case .setWindow(let hash, let window): "<li>\(edit.hostname.rawValue): publish \(hash.base64) \(window.map { "from \($0.description)" } ?? "without a window")</li>"
            case .setReportOnly(let until):
                "<li>\(edit.hostname.rawValue): report-only until \(PinWindow.format(Date(timeIntervalSince1970: TimeInterval(until)))) (clients report a mismatch and connect)</li>"
            }
        }
        var actions: [HTML] = []
        if request.state == .open {
            if viewer.mayReview(request.customer) && !isAuthor {
                actions.append("""
                <form class="inline" method="post" action="/dashboard/requests/\(request.id)/approve">
                <input type="hidden" name="csrf" value="\(context.csrfToken)">
                <button type="submit" id="approve">Approve and publish</button></form>
                """)
            }
            if viewer.mayReview(request.customer) || isAuthor {
                actions.append("""
                <form class="inline" method="post" action="/dashboard/requests/\(request.id)/reject">
                <input type="hidden" name="csrf" value="\(context.csrfToken)">
                <label for="reject-note">Why (goes to the audit log)</label>
                <input type="text" id="reject-note" name="note" maxlength="\(AdminLimits.reasonLength)">
                <button type="submit" class="danger" id="reject">\(isAuthor ? "Withdraw" : "Reject")</button></form>
                """)
            }
            if isAuthor {
                actions.append("<p class=\"muted\">You opened this request: another admin with the reviewer role must approve it.</p>")
            } else if !viewer.mayReview(request.customer) {
                actions.append("<p class=\"muted\">Approving needs the reviewer role for \(request.customer.rawValue).</p>")
            }
        } else if request.state == .expired {
            actions.append("<p class=\"warn\">This request has expired: it can no longer be approved. Its author can open it again.</p>")
        }
        let decided: HTML = if let by = request.decidedBy {
            "<dt>Decided</dt><dd>\(request.state.rawValue) by \(by) at \(AdminDocuments.date(request.decidedAt))\(request.decisionNote.map { ": \($0)" } ?? "")\(request.appliedVersion.map { " (version \($0))" } ?? "")</dd>"
        } else {
            ""
        }
        return layout(context, title: "Change request \(request.id)", body: """
        \(notice.map { HTML("<div class=\"banner info\" id=\"notice\">\($0)</div>") } ?? "")
        \(refusal.map { HTML("<div class=\"banner bad\" id=\"refusal\">\($0.message)</div>") } ?? "")
        <h1>Change request #\(request.id) of <a href="/dashboard/customers/\(request.customer.rawValue)">\(request.customer.rawValue)</a></h1>
        <dl id="request" data-state="\(request.state.rawValue)">
        <dt>State</dt><dd id="state">\(request.state.rawValue)</dd>
        <dt>Author</dt><dd>\(request.author)</dd>
        <dt>Reason</dt><dd>\(request.reason)</dd>
        <dt>Opened</dt><dd>\(AdminDocuments.date(request.createdAt)) on version \(request.baseVersion)</dd>
        <dt>Expires</dt><dd>\(AdminDocuments.date(request.expiresAt))</dd>
        \(decided)
        </dl>
        <h2>Edits</h2>
        <ul>\(edits)</ul>
        \(hosts.isEmpty ? HTML("") : HTML("<h2>Pins after approval, checked against the live chain now</h2>\(scrolling("Pins after approval", "<table id=\"preview\"><thead><tr><th>Host</th><th>Change</th><th>Live chain</th></tr></thead><tbody>\(hosts)</tbody></table>"))"))
        \(previewFailure.map { HTML("<div class=\"banner warn\" id=\"preview-failure\">The live-chain check of the result could not run: \($0)</div>") } ?? "")
        <div id="actions">\(actions)</div>
        """)
    }

    // MARK: Login, refusals, layout

    static func login(formToken: String, message: String?) -> HTML {
        """
        \(head(title: "Pinset dashboard: log in"))<body>
        <main class="login"><h1>Pinset dashboard</h1>
        \(message.map { HTML("<div class=\"banner bad\" id=\"refusal\">\($0)</div>") } ?? "")
        <form method="post" action="/dashboard/login">
        <input type="hidden" name="form" value="\(formToken)">
        <label for="token">Admin token</label>
        <input type="password" id="token" name="token" autocomplete="off" required>
        <p class="muted">The token <code>pinset admin token NAME</code> printed for you. The session ends after 30 idle minutes, and when the token is revoked.</p>
        <button type="submit" id="login">Log in</button>
        </form></main></body></html>
        """
    }

    static func refusal(_ refusal: DashboardRefusal) -> HTML {
        let heading = refusalHeading(refusal.status)
        return """
        \(head(title: "Pinset dashboard: \(heading)"))<body><main>
        <h1>\(heading)</h1>
        <div class="banner bad" id="refusal">\(refusal.message)</div>
        <p><a href="/dashboard/">Back to the dashboard</a></p></main></body></html>
        """
    }

    static func refusalHeading(_ status: Int) -> String {
        switch status {
        case 400: "The request could not be read"
        case 401: "Not logged in"
        case 404: "Not found"
        case 409: "Not possible now"
        case 415: "Not a form"
        case 429: "Too many tries"
        case 500..<600: "The server could not answer"
        default: "Refused"
        }
    }

    /// Every page's head: it fits a phone's width, and loads nothing but the dashboard's own stylesheet and icon.
    static func head(title: String) -> HTML {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1"><title>\(title)</title>
        <link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/dashboard/style.css"></head>
        """
    }

    static func layout(_ context: Context, title: String, body: HTML) -> HTML {
        """
        \(head(title: "Pinset: \(title)"))<body>
        <header><a href="/dashboard/">Pinset</a>
        <span class="who" id="who">\(context.viewer.name) (\(context.viewer.grants.map(\.description).joined(separator: ", ")))</span>
        <form method="post" action="/dashboard/logout"><input type="hidden" name="csrf" value="\(context.csrfToken)"><button type="submit" class="secondary">Log out</button></form>
        </header>
        <main>\(body)</main></body></html>
        """
    }
}
