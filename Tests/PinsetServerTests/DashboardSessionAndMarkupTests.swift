import Foundation
import PinsetCore
@testable import PinsetDashboard
import Testing

/// The dashboard's two local guarantees: text never becomes markup, and sessions end when they should and cannot
/// be pushed out by another admin's logins.
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
}
