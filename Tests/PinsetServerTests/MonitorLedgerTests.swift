import Foundation
import PinsetCore
import PinsetLiveCheck
import PinsetServer
import Testing

/// What the monitor remembers between passes and which changes it logs.
struct MonitorLedgerTests {
    static let acme = try! CustomerName("acme")

    static func result(_ host: String, _ state: HostCheckState, customer: CustomerName = acme) -> HostCheckResult {
        HostCheckResult(job: HostCheckJob(customer: customer, host: HostPins(hostname: try! Hostname(host), pins: [])), state: state, detail: "detail of \(host)")
    }

    @Test func aHealthyHostSeenFirstIsNotAChangeButEveryLaterStateChangeIs() {
        var ledger = MonitorLedger()
        let start = Date(timeIntervalSince1970: 1_000)
        let first = ledger.record([Self.result("api.example.com", .matches), Self.result("shop.example.com", .unreachable)], at: start)
        #expect(first.map(\.hostname.rawValue) == ["shop.example.com"])
        #expect(first.first?.from == nil && first.first?.to == .unreachable)

        let same = ledger.record([Self.result("api.example.com", .matches), Self.result("shop.example.com", .unreachable)], at: start + 60)
        #expect(same.isEmpty)
        // The state has lasted since the pass that first saw it.
        #expect(ledger.needingAttention.first?.since == start)

        let swapped = ledger.record([Self.result("api.example.com", .matchesNothing), Self.result("shop.example.com", .unreachable)], at: start + 120)
        #expect(swapped == [MonitorLedger.StateChange(
            customer: Self.acme, hostname: try! Hostname("api.example.com"), port: 443, from: .matches, to: .matchesNothing, detail: "detail of api.example.com"
        )])
        let recovered = ledger.record([Self.result("api.example.com", .matches), Self.result("shop.example.com", .unreachable)], at: start + 180)
        #expect(recovered.map { "\($0.from?.rawValue ?? "-")>\($0.to.rawValue)" } == ["matches-nothing>matches"])
    }

    @Test func countsEveryStateAndListsTheHostsNeedingAttentionWorstFirst() {
        var ledger = MonitorLedger()
        _ = ledger.record([
            Self.result("a.example.com", .matches), Self.result("b.example.com", .unmonitored),
            Self.result("c.example.com", .soleKeyExpiring), Self.result("d.example.com", .matchesNothing),
            Self.result("e.example.com", .unreachable), Self.result("f.example.com", .matches),
        ], at: Date())
        let counts = ledger.counts
        #expect(counts.count == HostCheckState.allCases.count)
        #expect(counts[.matches] == 2 && counts[.matchesOnlyBackup] == 0 && counts[.unmonitored] == 1)
        #expect(ledger.needingAttention.map(\.result.host.hostname.rawValue) == ["d.example.com", "e.example.com", "c.example.com", "b.example.com"])

        // A host no longer checked (removed, or its pins gone) is forgotten.
        _ = ledger.record([Self.result("a.example.com", .matches)], at: Date())
        #expect(ledger.entries.count == 1)
        #expect(ledger.needingAttention.isEmpty)
    }
}
