import Foundation
import PinsetAdmin
import PinsetAdminAPI
import PinsetAdminContract
import PinsetCore
@testable import PinsetDashboard
import PinsetStatus
import Testing

/// The dashboard's local guarantees: text never becomes markup, a form that is not UTF-8 text is refused rather
/// than read as empty, sessions end when they should and cannot be pushed out by another admin's logins, and the
/// pages say what they mean to a person on any screen.
struct DashboardSessionAndMarkupTests {
    /// Sequences that are one grapheme cluster with a markup character inside: escaping by Character misses them.
    static let clustered = [
        "\u{600}<meta http-equiv=refresh content=0;url=https://attacker.example/>\u{301}",
        "x\"\u{301} autofocus onfocus=alert(1) x=\"",
        "'\u{301}><form action=/dashboard/requests/9/approve method=post>",
        "&\u{301}lt;",
    ]

    @Test(arguments: clustered) func escapedTextHasNoMarkupCharacterLeft(_ text: String) {
        let escaped = HTML.escape(text)
        #expect(!escaped.unicodeScalars.contains { "<>\"'".unicodeScalars.contains($0) }, "\(escaped.debugDescription)")
        // Nothing but the five characters changes: each grows by the length of its entity less one.
        let growth = text.unicodeScalars.reduce(0) { total, scalar in
            total + (["<": 3, ">": 3, "\"": 5, "'": 4, "&": 4] as [Unicode.Scalar: Int])[scalar, default: 0]
        }
        #expect(escaped.unicodeScalars.count == text.unicodeScalars.count + growth)
        #expect(escaped.unicodeScalars.filter { $0.value > 0x7F }.elementsEqual(text.unicodeScalars.filter { $0.value > 0x7F }))
    }

    @Test func interpolatedStringsAreEscapedAndOnlyLiteralsAreMarkup() {
        let reason = Self.clustered[0]
        let html: HTML = "<td title=\"\(reason)\">\(reason)</td>"
        #expect(html.rendered.hasPrefix("<td title=\"") && html.rendered.hasSuffix("</td>"))
        #expect(html.rendered.components(separatedBy: "<").count == 3, "only the two literal tags open: \(html.rendered)")
    }

    @Test func aSessionEndsWhenIdleOrOldAndIsForgottenAfterwards() throws {
        let sessions = DashboardSessions()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let token = SHA256Fingerprint(of: Array("token".utf8))
        let idle = sessions.create(tokenDigest: token, now: start).id
        #expect(sessions.session(id: idle, now: start.addingTimeInterval(DashboardSessions.idleLifetime - 1)) != nil)
        #expect(sessions.session(id: idle, now: start.addingTimeInterval(2 * DashboardSessions.idleLifetime)) == nil)
        #expect(sessions.session(id: idle, now: start) == nil, "an expired session is forgotten, not revived by an earlier clock")

        // Kept busy, a session still ends at its absolute lifetime.
        let busy = sessions.create(tokenDigest: token, now: start).id
        var now = start
        while now < start.addingTimeInterval(DashboardSessions.absoluteLifetime - 60) {
            now += DashboardSessions.idleLifetime / 2
            #expect(sessions.session(id: busy, now: now) != nil)
        }
        #expect(sessions.session(id: busy, now: start.addingTimeInterval(DashboardSessions.absoluteLifetime + 1)) == nil)
        #expect(sessions.session(id: "not-a-session", now: start) == nil)
    }

    @Test func anAdminsManyLoginsPushOutOnlyTheirOwnSessions() {
        let sessions = DashboardSessions()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let victim = sessions.create(tokenDigest: SHA256Fingerprint(of: Array("victim".utf8)), now: start).id
        let flooder = SHA256Fingerprint(of: Array("flooder".utf8))
        var flooded: [String] = []
        for index in 0..<(2 * DashboardSessions.maximumSessions) {
            flooded.append(sessions.create(tokenDigest: flooder, now: start.addingTimeInterval(Double(index) / 1000)).id)
        }
        #expect(sessions.count == DashboardSessions.maximumSessionsPerToken + 1)
        #expect(sessions.session(id: victim, now: start.addingTimeInterval(10)) != nil)
        #expect(sessions.session(id: flooded.last!, now: start.addingTimeInterval(10)) != nil)
        #expect(sessions.session(id: flooded.first!, now: start.addingTimeInterval(10)) == nil)
    }

    static func form(_ body: [UInt8]) -> AdminAPIRequest {
        AdminAPIRequest(method: "POST", target: "/dashboard/requests/1/reject", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                        body: body, remoteAddress: "127.0.0.1")
    }

    @Test(arguments: [
        Array("csrf=t&note=%FF%FE".utf8),          // escapes of bytes that are not UTF-8
        Array("csrf=t&note=caf%C3".utf8),          // a character cut short
        Array("csrf=t&note=100%".utf8),            // a malformed escape
        Array("csrf=t&note=".utf8) + [0xC0, 0xAF], // raw bytes that are not UTF-8
    ])
    func aFormThatIsNotUTF8TextIsRefusedNotReadAsEmpty(_ body: [UInt8]) throws {
        let refusal = try #require(throws: DashboardRefusal.self) { try FormBody(Self.form(body)) }
        #expect(refusal.status == 400)
        #expect(refusal.message.contains("is not UTF-8 text") && refusal.message.contains("Nothing was changed"), "\(refusal.message)")
    }

    @Test func aFormOfUTF8TextIsRead() throws {
        let form = try FormBody(Self.form(Array("csrf=t&note=caf%C3%A9+ok&note=second".utf8)))
        #expect(form["note"] == "café ok", "the first of a repeated field")
        #expect(form["csrf"] == "t")
    }

    static func health(fetches: Int, shareOnLatest: Double?, latestVersion: Int64?) throws -> CustomerHealth {
        var document: [String: Any] = ["customer": "acme", "served": true, "monitoringEnabled": false, "hosts": [], "failingHosts": 0,
                                       "fetches": fetches, "breakGlass": []]
        if let shareOnLatest { document["shareOnLatest"] = shareOnLatest }
        if let latestVersion { document["latestVersion"] = latestVersion }
        return try JSONDecoder().decode(CustomerHealth.self, from: JSONSerialization.data(withJSONObject: document))
    }

    @Test func uptakeCountsTheFetchesThatReportedNoVersion() throws {
        #expect(DashboardPages.uptake(try Self.health(fetches: 93, shareOnLatest: nil, latestVersion: 4)).rendered.contains("93 fetches, none reported a version"))
        #expect(DashboardPages.uptake(try Self.health(fetches: 1, shareOnLatest: nil, latestVersion: 4)).rendered.contains("1 fetch, none reported a version"))
        #expect(DashboardPages.uptake(try Self.health(fetches: 0, shareOnLatest: nil, latestVersion: 4)).rendered.contains("no fetches"))
        #expect(DashboardPages.uptake(try Self.health(fetches: 7, shareOnLatest: nil, latestVersion: nil)).rendered.contains("7 fetches, no version served now"))
        #expect(!DashboardPages.uptake(try Self.health(fetches: 10, shareOnLatest: 0.5, latestVersion: 4)).rendered.contains("none reported"))
        #expect(DashboardPages.uptake(nil).rendered.contains("no server status"))
    }

    @Test func nextKeyVerdictsAreWordsWithTheirCodeKeptAside() {
        let words = [RotationGate.Readiness.Verdict.safe, .notYet, .noNextKey].map { DashboardPages.nextKey($0).rendered }
        #expect(words[2].contains(">no next key pinned<") && words[2].contains("data-verdict=\"no-next-key\""), "\(words[2])")
        #expect(words[1].contains(">next key pinned, not yet safe to go live<"))
        #expect(words[0].contains(">a next key may go live now<"))
        #expect(DashboardPages.nextKey(nil).rendered == words[2], "a host the gate did not judge has no next key")
    }

    @Test func everyPageFitsANarrowScreenAndHasItsLandmarks() {
        let login = DashboardPages.login(formToken: "t", message: nil).rendered
        let notFound = DashboardPages.refusal(DashboardRefusal(404, "There is no such page: GET /dashboard/nothing.")).rendered
        for page in [login, notFound] {
            #expect(page.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
            #expect(page.contains("<link rel=\"icon\" href=\"/favicon.ico\">"))
        }
        #expect(login.contains("<main class=\"login\">") && login.contains("</main>"))
        #expect(notFound.contains("<h1>Not found</h1>"), "\(notFound)")
        #expect(!login.contains("style="), "the CSP allows no inline style")
    }

    @Test func theIconIsAnICOFileWithAPNGInside() {
        let icon = Dashboard.favicon
        #expect(icon.starts(with: [0, 0, 1, 0, 1, 0]), "an ICO header with one image")
        #expect(icon[22...].starts(with: [0x89, 0x50, 0x4E, 0x47]), "the image is a PNG")
        #expect(Dashboard.serves("/favicon.ico"))
    }
}
