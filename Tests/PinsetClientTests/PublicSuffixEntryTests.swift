import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// A bundle whose include-subdomains entries name a single label or a public suffix would pin every site under
/// it, third-party SDKs included: the client ignores such entries and says so in the evaluation.
@Suite("Public-suffix include-subdomains entries")
struct PublicSuffixEntryTests {
    /// A hand-made bundle carrying `com` and `co.uk` with include-subdomains and pins that match nothing, plus
    /// a legitimate `example.net` parent, installed through a verified update.
    private func evaluator(publicSuffixes: PublicSuffixList?, policy: UnpinnedHostPolicy = .allow) async throws -> PinEvaluator {
        var fixture = try ClientFixture(policy: policy)
        defer { fixture.directory.remove() }
        fixture.configuration.publicSuffixes = publicSuffixes
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(hosts: [
            try ClientFixture.host("com", pins: ["stale-a", "stale-b"], includeSubdomains: true),
            try ClientFixture.host("co.uk", pins: ["stale-a", "stale-b"], includeSubdomains: true),
            try ClientFixture.host("example.net", pins: ["stale-a", "stale-b"], includeSubdomains: true),
        ]))
        return updater.evaluator
    }

    static let suffixes = try! PublicSuffixList(text: "com\nuk\nco.uk\nnet\n")

    @Test func singleLabelAndPublicSuffixEntriesAreNotEnforced() async throws {
        let pins = try await evaluator(publicSuffixes: Self.suffixes)
        let shop = try TestChain(host: "shop.example.com")
        let com = pins.evaluate(host: "shop.example.com", chain: shop.validated)
        #expect(com == .notPinned(host: "shop.example.com", ignoredSuffixEntries: [try Hostname("com")]))
        #expect(com.isTrusted)
        #expect(com.description.contains("'com'") && com.description.contains("ignored"), "\(com)")
        let uk = pins.evaluate(host: "www.example.co.uk", chain: try TestChain(host: "www.example.co.uk").validated)
        #expect(uk == .notPinned(host: "www.example.co.uk", ignoredSuffixEntries: [try Hostname("co.uk")]))
        // An ordinary include-subdomains parent is still enforced.
        #expect(!pins.evaluate(host: "api.example.net", chain: try TestChain(host: "api.example.net").validated).isTrusted)
    }

    @Test func withoutAListOnlySingleLabelEntriesAreIgnored() async throws {
        let pins = try await evaluator(publicSuffixes: nil, policy: .refuse)
        let com = pins.evaluate(host: "shop.example.com", chain: try TestChain(host: "shop.example.com").validated)
        // Not covered once `com` is ignored, so the unpinned-host policy decides (here: refuse), with the reason.
        #expect(com == .unpinnedHostRefused(host: "shop.example.com", ignoredSuffixEntries: [try Hostname("com")]))
        // `co.uk` has two labels: only the list knows it is a public suffix.
        let uk = pins.evaluate(host: "www.example.co.uk", chain: try TestChain(host: "www.example.co.uk").validated)
        guard case .pinMismatch(_, let entry, _, _) = uk else {
            Issue.record("expected co.uk to be enforced without a list, got \(uk)")
            return
        }
        #expect(entry == (try Hostname("co.uk")))
    }

    @Test func anEntryForTheSuffixItselfStillAppliesToThatName() async throws {
        let pins = try await evaluator(publicSuffixes: Self.suffixes)
        #expect(!pins.evaluate(host: "com", chain: []).isTrusted)
    }
}
