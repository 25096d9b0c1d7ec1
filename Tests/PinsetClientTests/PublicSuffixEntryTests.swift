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

    @Test func theDefaultConfigurationIgnoresPublicSuffixesFromTheBundledList() async throws {
        let fixture = try ClientFixture(policy: .allow)
        defer { fixture.directory.remove() }
        #expect(fixture.configuration.publicSuffixes != nil, "the library's own list is the default")
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(hosts: [
            try ClientFixture.host("co.uk", pins: ["stale-a", "stale-b"], includeSubdomains: true),
            try ClientFixture.host("github.io", pins: ["stale-a", "stale-b"], includeSubdomains: true),
            try ClientFixture.host("example.co.uk", pins: ["stale-a", "stale-b"], includeSubdomains: true),
        ]))
        let pins = updater.evaluator
        let uk = pins.evaluate(host: "www.shop.co.uk", chain: try TestChain(host: "www.shop.co.uk").validated)
        #expect(uk == .notPinned(host: "www.shop.co.uk", ignoredSuffixEntries: [try Hostname("co.uk")]))
        let pages = pins.evaluate(host: "someone.github.io", chain: try TestChain(host: "someone.github.io").validated)
        #expect(pages == .notPinned(host: "someone.github.io", ignoredSuffixEntries: [try Hostname("github.io")]))
        // A registrable domain under the suffix is still enforced.
        #expect(!pins.evaluate(host: "api.example.co.uk", chain: try TestChain(host: "api.example.co.uk").validated).isTrusted)
    }

    @Test func theBundledListAgreesWithTheSystemListTheServerReads() throws {
        let system = try PublicSuffixList(text: String(contentsOfFile: "/usr/share/publicsuffix/public_suffix_list.dat", encoding: .utf8))
        for name in ["com", "co.uk", "github.io", "pvt.k12.ma.us", "kawasaki.jp", "example.com", "city.kawasaki.jp"] {
            let host = try Hostname(name)
            #expect(PublicSuffixList.bundled.isPublicSuffix(host) == system.isPublicSuffix(host), "\(name)")
        }
    }

    @Test func anEntryForTheSuffixItselfStillAppliesToThatName() async throws {
        let pins = try await evaluator(publicSuffixes: Self.suffixes)
        #expect(!pins.evaluate(host: "com", chain: []).isTrusted)
    }
}
