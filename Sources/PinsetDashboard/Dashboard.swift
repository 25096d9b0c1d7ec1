import Foundation
import PinsetAdmin
import PinsetAdminContract
import PinsetCore
import PinsetLiveCheck
import PinsetStatus
import PinsetStore

/// The dashboard: server-rendered HTML pages under `/dashboard/` on the admin API's listener, for admins in a
/// browser. It reads and decides through the same ``Admin`` rules as the CLI and the API; it only renders.
///
/// It runs no script at all: the Content-Security-Policy allows nothing but its own stylesheet and forms posted to
/// itself. An admin logs in with their API token, which becomes a session cookie (`__Host-`, HttpOnly, Secure,
/// SameSite=Strict). Every state change is a POST that must come from the dashboard's own pages: a browser's
/// `Sec-Fetch-Site` and `Origin`, where sent, must say so, and the form must carry the session's CSRF token.
public struct Dashboard: Sendable {
    public let admin: Admin
    public let throttle: AuthenticationThrottle
    public let liveCheck: @Sendable (Hostname) -> LiveCheckSettings
    /// The running server's status, for host health, uptake, reports and expiry; nil where there is none.
    public let status: @Sendable () -> ServerStatus?
    public let sessions: DashboardSessions
    /// Shared with the admin API, so that neither a page nor the API starts live-chain checks faster than it.
    public let previews: ChangeRequestPreviews
    /// Told of every error no rule expected (answered 500 without its text).
    public let onUnexpectedError: @Sendable (AdminAPIRequest, any Error) -> Void
    /// The admin API's count of refusals per token (a missing role, something not visible): a token probing through
    /// the dashboard is throttled and logged as through the API, and by the same count.
    public let refusals: AuthenticationThrottle?
    public let onRefusalLimit: @Sendable (_ admin: String, _ address: String) -> Void
    /// The server's `reportOnlyMaximumHours`, in seconds: an approved report-only window ends no later than this from
    /// the approval, as through the API.
    public let reportOnlyMaximumSeconds: Int64

    public static let prefix = "/dashboard"
    static let sessionCookie = "__Host-pinset_session"
    static let loginCookie = "__Host-pinset_login"
    static let stylesheet: [UInt8] = PackageResources.dashboard_css
    /// Browsers ask for `/favicon.ico` on every origin: served, not 404, and cacheable for a day.
    static let favicon: [UInt8] = PackageResources.favicon_ico
    static let faviconPath = "/favicon.ico"

    public init(
        admin: Admin, throttle: AuthenticationThrottle, liveCheck: @escaping @Sendable (Hostname) -> LiveCheckSettings,
        status: @escaping @Sendable () -> ServerStatus?, sessions: DashboardSessions = DashboardSessions(),
        previews: ChangeRequestPreviews = ChangeRequestPreviews(),
        onUnexpectedError: @escaping @Sendable (AdminAPIRequest, any Error) -> Void = { _, _ in },
        refusals: AuthenticationThrottle? = nil,
        onRefusalLimit: @escaping @Sendable (_ admin: String, _ address: String) -> Void = { _, _ in },
        reportOnlyMaximumSeconds: Int64 = BundleBounds.maximumReportOnlySeconds
    ) {
        self.reportOnlyMaximumSeconds = reportOnlyMaximumSeconds
        self.refusals = refusals
        self.onRefusalLimit = onRefusalLimit
        self.previews = previews
        self.admin = admin
        self.throttle = throttle
        self.liveCheck = liveCheck
        self.status = status
        self.sessions = sessions
        self.onUnexpectedError = onUnexpectedError
    }

    /// Whether the dashboard answers this path rather than the API.
    public static func serves(_ path: Substring) -> Bool {
        path == "/" || path == prefix || path.hasPrefix(prefix + "/") || path == faviconPath
    }

    public func respond(to request: AdminAPIRequest) async -> AdminAPIResponse {
        var response: AdminAPIResponse
        do {
            response = try await route(request)
        } catch let refusal as DashboardRefusal {
            response = Self.answer(refusal)
        } catch let error as AdminError {
            response = Self.answer(DashboardRefusal(error))
        } catch let error as StoreError {
            if error.needsServerLog { onUnexpectedError(request, error) }
            response = Self.answer(DashboardRefusal(error))
        } catch {
            onUnexpectedError(request, error)
            response = Self.page(status: 500, DashboardPages.refusal(DashboardRefusal(500, "The request failed on the server. The server's log has the detail.")))
        }
        response.headers += Self.securityHeaders
        return response
    }

    /// On every answer: nothing but the dashboard's own stylesheet loads, no script runs, no page frames it, and
    /// forms post only to it. The referrer stays on this origin; `no-referrer` would make browsers send
    /// `Origin: null` with the dashboard's own forms.
    static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "same-origin"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]

    private func route(_ request: AdminAPIRequest) async throws -> AdminAPIResponse {
        let path = request.path
        if path == "/" || path == Self.prefix { return Self.redirect(Self.prefix + "/") }
        if path == Self.faviconPath {
            guard request.method == "GET" else {
                var refused = Self.page(status: 405, DashboardPages.refusal(DashboardRefusal(405, "\(Self.faviconPath) is only read, with GET.")))
                refused.headers.append(("Allow", "GET"))
                return refused
            }
            return AdminAPIResponse(status: 200, headers: [("Content-Type", "image/x-icon"), ("Cache-Control", "public, max-age=86400")], body: Self.favicon)
        }
        // Only the entry pages may be opened from another site's link: no other page reflects anything to one.
        if request.method == "GET", let site = request.header("Sec-Fetch-Site"), site == "cross-site" || site == "same-site",
           path != Self.prefix + "/", path != Self.prefix + "/login" {
            throw DashboardRefusal(403, "This page opens only from the dashboard itself; start at \(Self.prefix)/.")
        }
        let route = path.dropFirst(Self.prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? "" }
        switch (request.method, route.count, route[0]) {
        case ("GET", 1, "style.css"):
            return AdminAPIResponse(status: 200, headers: [("Content-Type", "text/css; charset=utf-8")], body: Self.stylesheet)
        case ("GET", 1, "login"):
            let formToken = Base64URL.random(byteCount: 32)
            return Self.page(status: 200, DashboardPages.login(formToken: formToken, message: nil), cookies: [Self.cookie(Self.loginCookie, formToken, maxAge: 600)])
        case ("POST", 1, "login"):
            return try logIn(request)
        default:
            break
        }
        // Before the session: a cross-site request is refused as such, whether or not the browser sent the cookie.
        if request.method != "GET" { try requireSameOrigin(request) }
        let (session, sessionID, viewer) = try authenticate(request)
        if let seconds = refusals?.retryAfter(for: viewer) {
            throw DashboardRefusal(429, "Admin \(viewer.name) was refused too often in the last minute (a missing role, or something it may not see); try again in \(seconds) s.")
        }
        do {
            // Every write this request makes requires the session's token to be valid still, inside its transaction.
            return try await AdminCredentialScope.$token.withValue(viewer.token) {
                try await routeInSession(request, route, session: session, sessionID: sessionID, viewer: viewer)
            }
        } catch {
            let status = switch error {
            case let refusal as DashboardRefusal: refusal.countsAsRefusal ? refusal.status : 0
            case let refusal as AdminError: DashboardRefusal(refusal).status
            case let refusal as StoreError: DashboardRefusal(refusal).status
            default: 0
            }
            count(status, of: viewer, request)
            throw error
        }
    }

    /// A refusal (403 or 404) counts against the session's token, as the API counts it against the token itself.
    private func count(_ status: Int, of viewer: AdminAccount, _ request: AdminAPIRequest) {
        if refusals?.recordRefusal(of: viewer, status: status) == true { onRefusalLimit(viewer.name, request.remoteAddress) }
    }

    private func routeInSession(
        _ request: AdminAPIRequest, _ route: [String], session: DashboardSessions.Session, sessionID: String, viewer: AdminAccount
    ) async throws -> AdminAPIResponse {
        let context = DashboardPages.Context(viewer: viewer, csrfToken: session.csrfToken)
        switch (request.method, route.count, route[0]) {
        case ("GET", 1, ""):
            let status = self.status()
            let customers = try admin.customers(visibleTo: viewer)
            let requests = try admin.changeRequests(visibleTo: viewer)
            let rotation = try admin.rotationReadiness(visibleTo: viewer, gate: RotationGate())
            let breakGlass = try admin.breakGlassEvents(visibleTo: viewer)
            return Self.page(status: 200, DashboardPages.overview(
                context, customers: customers, status: status, rotation: rotation, requests: requests, breakGlass: breakGlass,
                reportOnly: try admin.reportOnlyWindows(of: nil, visibleTo: .admin(viewer))
            ))
        case ("GET", 2, "customers"):
            let customer = try Self.customerName(route[1])
            let pinSet = try admin.pinSet(of: customer, visibleTo: viewer)
            return Self.page(status: 200, DashboardPages.customer(
                context, pinSet: pinSet, requiresReview: try admin.requiresReview(of: customer, visibleTo: viewer), health: try status().map { try admin.health(of: customer, visibleTo: viewer, in: $0) },
                rotation: try admin.rotationReadiness(of: customer, visibleTo: viewer, gate: RotationGate()),
                reports: try admin.pinFailureReport(of: customer, visibleTo: viewer, window: 86_400),
                requests: try admin.changeRequests(visibleTo: viewer, customer: customer),
                breakGlass: try admin.breakGlassEvents(visibleTo: viewer, customer: customer),
                audit: try admin.auditLog(of: customer, visibleTo: viewer, limit: 20),
                reportOnly: try admin.reportOnlyWindows(of: customer, visibleTo: .admin(viewer))
            ))
        case ("GET", 2, "requests"):
            return try await requestPage(try Self.requestID(route[1]), for: request, context: context, notice: Self.notice(request.query["done"]))
        case ("POST", 3, "requests") where route[2] == "approve" || route[2] == "reject":
            let decision = route[2]
            let form = try checkedForm(request, session: session)
            let id = try Self.requestID(route[1])
            do {
                if decision == "approve" {
                    _ = try await admin.approve(id, by: viewer, liveCheck: liveCheck, reportOnlyMaximumSeconds: reportOnlyMaximumSeconds)
                } else {
                    _ = try admin.reject(id, by: viewer, note: form["note"] ?? "")
                }
            } catch let error as AdminError {
                // Shown on the request's page rather than thrown, so counted here; a request the viewer may not see
                // (404) is counted once, when the page is refused below.
                if error.httpStatus != 404 { count(error.httpStatus, of: viewer, request) }
                return try await requestPage(id, for: request, context: context, notice: nil, refusal: DashboardRefusal(error))
            } catch let error as StoreError {
                if error.needsServerLog { onUnexpectedError(request, error) }
                let refusal = DashboardRefusal(error)
                if refusal.status != 404 { count(refusal.status, of: viewer, request) }
                return try await requestPage(id, for: request, context: context, notice: nil, refusal: refusal)
            }
            return Self.redirect("\(Self.prefix)/requests/\(id)?done=\(decision == "approve" ? "approved" : "rejected")")
        case ("POST", 3, "break-glass") where route[2] == "acknowledge":
            let form = try checkedForm(request, session: session)
            _ = try admin.acknowledgeBreakGlass(try Self.requestID(route[1]), by: viewer, note: form["note"] ?? "")
            return Self.redirect(Self.prefix + "/")
        case ("POST", 1, "logout"):
            _ = try checkedForm(request, session: session)
            sessions.end(id: sessionID)
            return Self.redirect("\(Self.prefix)/login", cookies: [Self.cookie(Self.sessionCookie, "", maxAge: 0)])
        default:
            var missing = DashboardRefusal(404, "There is no such page: \(request.method) \(request.path).")
            missing.countsAsRefusal = false
            throw missing
        }
    }

    private func requestPage(
        _ id: Int64, for request: AdminAPIRequest, context: DashboardPages.Context, notice: String?, refusal: DashboardRefusal? = nil
    ) async throws -> AdminAPIResponse {
        let changeRequest = try admin.changeRequest(id, visibleTo: context.viewer)
        var previews: [(hostname: Hostname, preview: HostEditPreview)] = []
        var previewFailure: String?
        if changeRequest.state == .open {
            // A request whose host was removed since cannot be previewed, but must still be shown and rejectable.
            do {
                previews = try await self.previews.previews(of: changeRequest, admin: admin, liveCheck: liveCheck, by: context.viewer)
            } catch let error as AdminError {
                previewFailure = error.description
            } catch let error as StoreError {
                // The database's own words (its path among them) are the operator's, as on every other page.
                if error.needsServerLog { onUnexpectedError(request, error) }
                previewFailure = AdminAPIError(error).message
            }
        }
        return Self.page(status: refusal?.status ?? 200, DashboardPages.changeRequest(
            context, changeRequest, previews: previews, previewFailure: previewFailure, notice: notice, refusal: refusal
        ))
    }

    // MARK: Sessions

    /// Logs in with an admin token: the form must carry the login cookie's value (a page of another site cannot
    /// log a browser in as its own admin), and the token is taken by the API's rule: failures count against the
    /// address, and a valid token is accepted from a throttled one.
    private func logIn(_ request: AdminAPIRequest) throws -> AdminAPIResponse {
        try requireSameOrigin(request)
        let form = try FormBody(request)
        guard let cookie = Self.cookies(request)[Self.loginCookie], let field = form["form"], ConstantTime.equal(cookie, field) else {
            throw DashboardRefusal(403, "The login form has expired or did not come from this dashboard. Open the login page again.")
        }
        func retry(_ message: String, status: Int) -> AdminAPIResponse {
            let formToken = Base64URL.random(byteCount: 32)
            return Self.page(status: status, DashboardPages.login(formToken: formToken, message: message), cookies: [Self.cookie(Self.loginCookie, formToken, maxAge: 600)])
        }
        let presented = form["token"].flatMap { $0.isEmpty ? nil : $0 }
        let tokenDigest: SHA256Fingerprint
        switch try throttle.authenticate(presented, from: request.remoteAddress, with: admin) {
        case .authenticated(_, let digest):
            tokenDigest = digest
        case .refused(let message, let retryAfter?):
            var response = retry(message, status: 429)
            response.headers.append(("Retry-After", String(retryAfter)))
            return response
        case .refused(let message, nil):
            return retry(message, status: 401)
        }
        // A session the browser still holds ends: one browser, one session.
        if let previous = Self.cookies(request)[Self.sessionCookie] { sessions.end(id: previous) }
        let (id, _) = sessions.create(tokenDigest: tokenDigest)
        return Self.redirect(Self.prefix + "/", cookies: [
            Self.cookie(Self.loginCookie, "", maxAge: 0), Self.cookie(Self.sessionCookie, id, maxAge: Int(DashboardSessions.absoluteLifetime)),
        ])
    }

    /// The session of the request's cookie and its admin, authenticated again now; without one, a GET is sent to
    /// the login page and anything else refused.
    private func authenticate(_ request: AdminAPIRequest) throws -> (DashboardSessions.Session, String, AdminAccount) {
        func loginRequired() -> DashboardRefusal {
            request.method == "GET"
                ? DashboardRefusal(303, "Log in first.", location: "\(Self.prefix)/login")
                : DashboardRefusal(403, "You are not logged in, or the session has ended. Nothing was changed; log in again and repeat the action.")
        }
        guard let id = Self.cookies(request)[Self.sessionCookie], let session = sessions.session(id: id) else { throw loginRequired() }
        do {
            return (session, id, try admin.authenticate(tokenDigest: session.tokenDigest))
        } catch is AdminError {
            sessions.end(id: id)
            throw loginRequired()
        }
    }

    /// A state-changing form, once it is shown to come from this dashboard: same origin, and the session's CSRF
    /// token.
    private func checkedForm(_ request: AdminAPIRequest, session: DashboardSessions.Session) throws -> FormBody {
        try requireSameOrigin(request)
        let form = try FormBody(request)
        guard let token = form["csrf"], ConstantTime.equal(token, session.csrfToken) else {
            throw DashboardRefusal(403, "The form did not carry this session's CSRF token, so it may not come from this dashboard. Nothing was changed; reload the page and try again.")
        }
        return form
    }

    /// Refuses what a browser marks as sent from another site or origin. Requests without these headers (not from
    /// a browser) still need the CSRF token.
    private func requireSameOrigin(_ request: AdminAPIRequest) throws {
        if let site = request.header("Sec-Fetch-Site"), site != "same-origin", site != "none" {
            throw DashboardRefusal(403, "The request came from another site (\(site)); the dashboard accepts changes only from its own pages. Nothing was changed.")
        }
        if let origin = request.header("Origin"), let host = request.header("Host"),
           origin != "https://\(host)", origin != "http://\(host)" {
            throw DashboardRefusal(403, "The request came from \(origin), not from this dashboard. Nothing was changed.")
        }
    }

    // MARK: Responses

    static func answer(_ refusal: DashboardRefusal) -> AdminAPIResponse {
        if let location = refusal.location { return redirect(location) }
        return page(status: refusal.status, DashboardPages.refusal(refusal))
    }

    static func page(status: Int, _ html: HTML, cookies: [String] = []) -> AdminAPIResponse {
        AdminAPIResponse(
            status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + cookies.map { ("Set-Cookie", $0) },
            body: Array(html.rendered.utf8)
        )
    }

    static func redirect(_ location: String, cookies: [String] = []) -> AdminAPIResponse {
        AdminAPIResponse(status: 303, headers: [("Location", location)] + cookies.map { ("Set-Cookie", $0) })
    }

    /// `__Host-` cookies: Secure, Path=/ and no Domain, so no other host or path can set or shadow them.
    static func cookie(_ name: String, _ value: String, maxAge: Int) -> String {
        "\(name)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; Secure; SameSite=Strict"
    }

    static func cookies(_ request: AdminAPIRequest) -> [String: String] {
        var cookies: [String: String] = [:]
        for header in request.headers where header.name.lowercased() == "cookie" {
            for pair in header.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                if cookies[name] == nil { cookies[name] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return cookies
    }

    static func notice(_ done: String?) -> String? {
        switch done {
        case "approved": "Approved and applied. Every running server signs the new version within its re-signing interval."
        case "rejected": "Rejected. Nothing was published."
        default: nil
        }
    }

    static func customerName(_ text: String) throws -> CustomerName {
        do {
            return try CustomerName(text)
        } catch {
            throw DashboardRefusal(404, "There is no customer '\(text)'.")
        }
    }

    static func requestID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else { throw DashboardRefusal(404, "'\(text)' is not the number of a change request.") }
        return id
    }

}

/// A page that says why not, with its status.
struct DashboardRefusal: Error {
    let status: Int
    let message: String
    var location: String?
    /// Whether a 403 or 404 counts against the admin's token: a page this dashboard lacks reveals nothing.
    var countsAsRefusal = true

    init(_ status: Int, _ message: String, location: String? = nil) {
        self.status = status
        self.message = message
        self.location = location
    }

    init(_ error: AdminError) {
        self.init(error.httpStatus, error.description)
    }

    init(_ error: StoreError) {
        let refusal = AdminAPIError(error)
        self.init(refusal.status, refusal.message)
    }
}

/// Comparison whose time does not depend on where two secrets first differ.
enum ConstantTime {
    static func equal(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// An `application/x-www-form-urlencoded` body. A field that does not decode to UTF-8 text is refused, never read
/// as empty: a note would otherwise be stored blank without a word.
struct FormBody {
    private var fields: [String: String] = [:]

    init(_ request: AdminAPIRequest) throws {
        guard !request.body.isEmpty else { return }
        guard request.header("Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            throw DashboardRefusal(415, "The dashboard takes forms ('application/x-www-form-urlencoded') only.")
        }
        guard let body = String(validatingUTF8Bytes: request.body) else {
            throw Self.notText("The form")
        }
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else { throw Self.notText("A field name of the form") }
            guard let value = parts.count > 1 ? Self.decode(parts[1]) : "" else { throw Self.notText("The form's field '\(name)'") }
            if fields[name] == nil { fields[name] = value }
        }
    }

    /// nil for a malformed percent-escape, or escapes whose bytes are not UTF-8.
    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    private static func notText(_ what: String) -> DashboardRefusal {
        DashboardRefusal(400, "\(what) is not UTF-8 text (percent-escapes must decode to UTF-8), so it cannot be read. Nothing was changed; go back, type the text again in the dashboard's page and send it.")
    }

    subscript(_ name: String) -> String? { fields[name] }
}
