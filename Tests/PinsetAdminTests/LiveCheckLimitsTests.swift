import Foundation
import PinsetAdmin
import PinsetCore
import PinsetLiveCheck
import PinsetStore
import PinsetTestSupport
import Testing

/// The bounds on live-chain checks admins start through the server: a budget per admin's token in a sliding minute, the
/// reuse of a recent check of the same result, and what a failed fetch tells an admin who is not an operator.
struct LiveCheckLimitsTests {
    @Test func anAdminPastItsBudgetIsToldWhenToTryAgain() throws {
        let budget = LiveCheckBudget(checksPerMinute: 3)
        let start = Date()
        for second in 0..<3 { try budget.spend(by: "alice", key: "alice laptop", now: start.addingTimeInterval(Double(second))) }
        do {
            try budget.spend(by: "alice", key: "alice laptop", now: start.addingTimeInterval(20))
            Issue.record("a fourth check in the minute was allowed")
        } catch {
            #expect(error.kind == .throttled && error.retryAfterSeconds == 40, "\(error)")
            #expect(error.description.contains("3 live-chain checks with this token in the last minute") && error.description.contains("try again in 40 s"))
        }
        // The admin's other token has a budget of its own: a leaked CI token spending its budget locks no one out.
        try budget.spend(by: "alice", key: "alice ci", now: start.addingTimeInterval(20))
        try budget.spend(by: "bob", key: "bob laptop", now: start.addingTimeInterval(20))
        #expect(throws: AdminError.self, "a refused check is not counted, and the oldest is still in the minute") {
            try budget.spend(by: "alice", key: "alice laptop", now: start.addingTimeInterval(59))
        }
        try budget.spend(by: "alice", key: "alice laptop", now: start.addingTimeInterval(60))
    }

    @Test func theBudgetTableStaysBounded() throws {
        let budget = LiveCheckBudget(checksPerMinute: 1, maximumAdmins: 2)
        let now = Date()
        try budget.spend(by: "alice", key: "alice laptop", now: now)
        try budget.spend(by: "bob", key: "bob laptop", now: now.addingTimeInterval(1))
        try budget.spend(by: "carol", key: "carol laptop", now: now.addingTimeInterval(2))
        // alice's entry made room for carol's.
        try budget.spend(by: "alice", key: "alice laptop", now: now.addingTimeInterval(3))
        #expect(throws: AdminError.self) { try budget.spend(by: "carol", key: "carol laptop", now: now.addingTimeInterval(4)) }
    }

    /// Through the admin operations: alice's leaked CI token spends its whole budget on checks (each connects out, to
    /// a port that refuses); her laptop's token still checks, so whoever holds the CI token cannot lock her out of
    /// edits and approvals.
    @Test func aLeakedTokenSpendsOnlyItsOwnBudget() async throws {
        let fixture = try AdminFixture()
        defer { fixture.remove() }
        let acme = try CustomerName("acme"), host = try Hostname("api.example.com")
        try fixture.store.addCustomer(acme, actor: "test")
        try fixture.store.addHost(host, pins: [try PinMaterial.pin(base64SPKIHash: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", label: "")], to: acme, actor: "test")
        try fixture.store.addAdmin("alice", grants: [AdminGrant(role: .editor, customer: acme)], actor: "test")
        let ci = try fixture.admin.authenticate(try fixture.admin.issueToken(for: "alice", label: "ci", lifetime: nil))
        let laptop = try fixture.admin.authenticate(try fixture.admin.issueToken(for: "alice", label: "laptop", lifetime: nil))
        var settings = LiveCheckSettings(connectTo: "127.0.0.1:\(try LoopbackPort.unused())")
        settings.timeout = .seconds(1)
        settings.budget = LiveCheckBudget(checksPerMinute: 2)
        let edit = PinEdit(hostname: host, operation: .addPins([try PinMaterial.pin(base64SPKIHash: "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=", label: "")]))
        for _ in 0..<2 {
            let refused = try await Self.propose(edit, of: acme, as: ci, with: fixture.admin, settings)
            #expect(refused != nil && refused?.kind != .throttled, "checked, and refused for the unreachable host: \(String(describing: refused))")
        }
        #expect(try await Self.propose(edit, of: acme, as: ci, with: fixture.admin, settings)?.kind == .throttled, "the CI token's budget is spent")
        let fromLaptop = try await Self.propose(edit, of: acme, as: laptop, with: fixture.admin, settings)
        #expect(fromLaptop != nil && fromLaptop?.kind != .throttled, "the laptop's token still checks: \(String(describing: fromLaptop))")
    }

    /// The refusal of a direct pin edit, or nil when it was applied.
    static func propose(_ edit: PinEdit, of customer: CustomerName, as account: AdminAccount, with admin: Admin, _ settings: LiveCheckSettings) async throws -> AdminError? {
        do {
            _ = try await admin.proposePinEdits([edit], for: customer, reason: "a backup key", lifetime: 3600, by: account, liveCheck: settings)
            return nil
        } catch let error as AdminError {
            return error
        }
    }

    final class Counter: Sendable {
        let count = LockedValue(0)
        func check() -> @Sendable () async -> LiveEditCheck.Outcome {
            { [self] in
                count.withLock { $0 += 1 }
                return .unreachable(endpoint: "api.example.com:443", reason: LiveChainError("api.example.com:443 closed the connection before presenting a certificate."))
            }
        }
    }

    func key(_ hash: String) throws -> RecentLiveChecks.Key {
        let pin = try PinMaterial.pin(base64SPKIHash: hash)
        return RecentLiveChecks.Key(
            customer: try CustomerName("acme"), host: HostPins(hostname: try Hostname("api.example.com"), port: 443, includeSubdomains: false, pins: [pin]),
            caFile: nil, connectTo: nil, addressPolicy: OutboundAddressPolicy()
        )
    }

    @Test func theSameResultWithinTheWindowIsCheckedOnce() async throws {
        let recent = RecentLiveChecks(maximumAge: 30)
        let counter = Counter()
        let first = try key("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let start = Date()
        let spent = LockedValue(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<30 {
                group.addTask { _ = try await recent.outcome(for: first, now: start, beforeStarting: { spent.withLock { $0 += 1 } }, check: counter.check()) }
            }
            try await group.waitForAll()
        }
        #expect(counter.count.withLock { $0 } == 1 && spent.withLock { $0 } == 1, "thirty at once: one check, charged once")
        _ = try await recent.outcome(for: first, now: start.addingTimeInterval(29), beforeStarting: {}, check: counter.check())
        #expect(counter.count.withLock { $0 } == 1)
        _ = try await recent.outcome(for: try key("AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="), now: start, beforeStarting: {}, check: counter.check())
        #expect(counter.count.withLock { $0 } == 2, "another result is checked")
        _ = try await recent.outcome(for: first, now: start.addingTimeInterval(31), beforeStarting: {}, check: counter.check())
        #expect(counter.count.withLock { $0 } == 3, "an old check is made again")
    }

    @Test func aCheckRefusedBeforeItStartsIsNotReused() async throws {
        let recent = RecentLiveChecks(maximumAge: 30)
        let counter = Counter()
        let first = try key("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        await #expect(throws: AdminError.self) {
            try await recent.outcome(for: first, beforeStarting: { throw AdminError("over budget", kind: .throttled, retryAfterSeconds: 5) }, check: counter.check())
        }
        #expect(counter.count.withLock { $0 } == 0)
        _ = try await recent.outcome(for: first, beforeStarting: {}, check: counter.check())
        #expect(counter.count.withLock { $0 } == 1)
    }

    /// An admin who is not an operator reads one sentence for every chain that could not be fetched: a closed port,
    /// an open one that sent nothing, a timeout and a chain that does not validate look alike.
    @Test func aFailedFetchReadsAlikeForNonOperators() {
        let endpoint = "127.0.0.1:8443"
        let failures = [
            LiveChainError("Could not connect to 127.0.0.1:8443: connection refused (errno: 111). Check the host, port and that the server is up."),
            LiveChainError("127.0.0.1:8443 closed the connection before presenting a certificate."),
            LiveChainError("127.0.0.1:8443 did not complete a TLS handshake within 10.0 s."),
            LiveChainError("The chain presented by 127.0.0.1:8443 does not validate (no path to a trusted root).", kind: .notValidated),
        ]
        let told = Set(failures.map { $0.told(toOperator: false, endpoint: endpoint) })
        #expect(told == [LiveChainError.withoutDetail(endpoint: endpoint)])
        #expect(told.first?.contains("Could not fetch a validated certificate chain from 127.0.0.1:8443") == true)
        for failure in failures { #expect(failure.told(toOperator: true, endpoint: endpoint) == failure.description) }
        let refused = LiveChainError("Refused to check localhost:8443: localhost resolves to 127.0.0.1, a loopback (127.0.0.0/8) address …", kind: .addressNotAllowed)
        #expect(refused.told(toOperator: true, endpoint: endpoint) == refused.description, "an operator reads the resolved addresses")
        let toEditor = refused.told(toOperator: false, endpoint: "localhost:8443")
        #expect(!toEditor.contains("127.0.0.1") && toEditor.contains("nothing was checked") && toEditor.contains("monitoring.allowedAddresses"),
                "others learn that the name is not checked, not what it resolves to: \(toEditor)")
    }
}
