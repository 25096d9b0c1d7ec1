import Foundation
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

@Suite("Evaluating chains against pins")
struct PinEvaluatorTests {
    /// An evaluator holding `hosts`, installed the only way there is: a verified update.
    private func evaluator(_ hosts: [PinnedHost], policy: UnpinnedHostPolicy = .allow) async throws -> PinEvaluator {
        let fixture = try ClientFixture(policy: policy)
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(hosts: hosts))
        return updater.evaluator
    }

    @Test func exactHostMatchesByLeafKey() async throws {
        let chain = try TestChain()
        let pins = try await evaluator([try ClientFixture.host("api.example.com", keys: [chain.leaf])])
        let result = pins.evaluate(host: "api.example.com", chain: chain.validated)
        #expect(result == .pinnedMatch(host: "api.example.com", entry: try Hostname("api.example.com"), match: .subjectPublicKeyInfo(chain.leaf.spkiSHA256, chainIndex: 0)))
        #expect(result.isTrusted)
        // Host names compare case-insensitively and ignore a trailing dot.
        #expect(pins.evaluate(host: "API.Example.com.", chain: chain.validated).isTrusted)
    }

    @Test func intermediateKeyPinMatchesAnyLeafItIssued() async throws {
        let chain = try TestChain()
        let pins = try await evaluator([try ClientFixture.host("api.example.com", keys: [chain.intermediate])])
        let result = pins.evaluate(host: "api.example.com", chain: chain.validated)
        #expect(result == .pinnedMatch(host: "api.example.com", entry: try Hostname("api.example.com"), match: .subjectPublicKeyInfo(chain.intermediate.spkiSHA256, chainIndex: 1)))
    }

    @Test func certificateHashPinMatches() async throws {
        let chain = try TestChain()
        let pins = try await evaluator([try ClientFixture.host("api.example.com", certificates: [chain.leaf])])
        let result = pins.evaluate(host: "api.example.com", chain: chain.validated)
        #expect(result == .pinnedMatch(host: "api.example.com", entry: try Hostname("api.example.com"), match: .certificate(SHA256Fingerprint(of: chain.leaf.certificateDER), chainIndex: 0)))
    }

    @Test func includeSubdomainsParentCoversSubdomains() async throws {
        let chain = try TestChain(host: "eu.api.example.com")
        let pins = try await evaluator([try ClientFixture.host("example.com", keys: [chain.root], includeSubdomains: true)])
        let result = pins.evaluate(host: "eu.api.example.com", chain: chain.validated)
        #expect(result == .pinnedMatch(host: "eu.api.example.com", entry: try Hostname("example.com"), match: .subjectPublicKeyInfo(chain.root.spkiSHA256, chainIndex: 2)))
        // A look-alike suffix is not a subdomain.
        #expect(pins.evaluate(host: "badexample.com", chain: chain.validated) == .notPinned(host: "badexample.com"))
    }

    /// A name no bundle could list (an underscore, a label not in its xn-- form), which a private CA or a misissuance
    /// may still serve: under an include-subdomains parent it is pinned by that parent, never let through as unpinned.
    @Test func aNameNoBundleCouldListIsStillPinnedByItsParent() async throws {
        let chain = try TestChain()
        let pins = try await evaluator([
            try ClientFixture.host("example.com", keys: [chain.root], includeSubdomains: true),
            try ClientFixture.host("plain.example.org", pins: ["other"]),
        ])
        for name in ["my_svc.example.com", "a.b_c.Example.com.", "bücher.example.com"] {
            #expect(pins.evaluate(host: name, chain: chain.validated).isTrusted, "the parent's pin matches: \(name)")
            guard case .pinMismatch(_, let entry, _, _) = pins.evaluate(host: name, chain: [try TestChain(rootName: "Attacker Root").validated[0]]) else {
                Issue.record("\(name) escaped its parent's pins"); continue
            }
            #expect(entry == (try Hostname("example.com")))
        }
        // Only include-subdomains entries cover a name below them; elsewhere the policy applies as before.
        #expect(pins.evaluate(host: "my_svc.plain.example.org", chain: chain.validated) == .notPinned(host: "my_svc.plain.example.org"))
        #expect(pins.evaluate(host: "under_score", chain: chain.validated) == .notPinned(host: "under_score"))
    }

    @Test func parentWithoutIncludeSubdomainsDoesNotCoverSubdomains() async throws {
        let chain = try TestChain()
        let pins = try await evaluator([try ClientFixture.host("example.com", pins: ["other"])])
        #expect(pins.evaluate(host: "api.example.com", chain: chain.validated) == .notPinned(host: "api.example.com"))
    }

    @Test func mostSpecificEntryWins() async throws {
        let chain = try TestChain(host: "api.example.com")
        let pins = try await evaluator([
            try ClientFixture.host("example.com", keys: [chain.leaf], includeSubdomains: true),
            try ClientFixture.host("api.example.com", pins: ["rotated-away"]),
        ])
        let result = pins.evaluate(host: "api.example.com", chain: chain.validated)
        guard case .pinMismatch(_, let entry, _, _) = result else {
            Issue.record("expected the exact entry to decide, got \(result)")
            return
        }
        #expect(entry == (try Hostname("api.example.com")))
    }

    /// An evaluator holding `hosts` exactly as listed, entries without pins included (legacy signers publish them).
    private func evaluatorIncludingPinlessHosts(_ hosts: [PinnedHost], policy: UnpinnedHostPolicy = .allow) async throws -> PinEvaluator {
        let fixture = try ClientFixture(policy: policy)
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.updateIncludingPinlessHosts(updater, with: try fixture.payload(hosts: hosts))
        return updater.evaluator
    }

    @Test func aPinlessEntryDoesNotUnpinItsPinnedParent() async throws {
        // example.com pins its CA (include-subdomains); login.example.com was added without pins. An attacker's
        // chain for login.example.com from another CA must still be refused by the parent's pins.
        let genuine = try TestChain(host: "login.example.com", rootName: "Genuine Root")
        let attacker = try TestChain(host: "login.example.com", rootName: "Attacker Root")
        let pins = try await evaluatorIncludingPinlessHosts([
            try ClientFixture.host("example.com", keys: [genuine.root], includeSubdomains: true),
            try ClientFixture.host("login.example.com", pins: []),
        ])
        let login = try Hostname("login.example.com")
        let refused = pins.evaluate(host: "login.example.com", chain: attacker.validated)
        #expect(refused == .pinMismatch(
            host: "login.example.com",
            entry: try Hostname("example.com"),
            presented: [attacker.leaf.spkiSHA256, attacker.intermediate.spkiSHA256, attacker.root.spkiSHA256],
            skippedPinless: [login]
        ))
        #expect(!refused.isTrusted)
        #expect(refused.description.contains("'login.example.com' lists no pins and was skipped"))
        let accepted = pins.evaluate(host: "login.example.com", chain: genuine.validated)
        #expect(accepted == .pinnedMatch(
            host: "login.example.com",
            entry: try Hostname("example.com"),
            match: .subjectPublicKeyInfo(genuine.root.spkiSHA256, chainIndex: 2),
            skippedPinless: [login]
        ))
        #expect(pins.pinSet?.entry(for: login)?.hostname == (try Hostname("example.com")))
    }

    @Test func aPinlessIncludeSubdomainsEntryFallsThroughToTheNextPinnedParent() async throws {
        let genuine = try TestChain(host: "a.b.example.com")
        let attacker = try TestChain(host: "a.b.example.com", rootName: "Attacker Root")
        let pins = try await evaluatorIncludingPinlessHosts([
            try ClientFixture.host("example.com", keys: [genuine.intermediate], includeSubdomains: true),
            try ClientFixture.host("b.example.com", pins: [], includeSubdomains: true),
            try ClientFixture.host("a.b.example.com", pins: []),
        ])
        let result = pins.evaluate(host: "a.b.example.com", chain: attacker.validated)
        guard case .pinMismatch(_, let entry, _, let skipped) = result else {
            Issue.record("expected the pinned parent to refuse the chain, got \(result)")
            return
        }
        #expect(entry == (try Hostname("example.com")))
        #expect(skipped == [try Hostname("a.b.example.com"), try Hostname("b.example.com")])
        #expect(pins.evaluate(host: "a.b.example.com", chain: genuine.validated).isTrusted)
    }

    @Test(arguments: [UnpinnedHostPolicy.allow, .refuse])
    func aPinlessEntryWithoutAPinnedParentIsRefused(policy: UnpinnedHostPolicy) async throws {
        let chain = try TestChain(host: "login.example.com")
        let pins = try await evaluatorIncludingPinlessHosts([
            try ClientFixture.host("login.example.com", pins: []),
            try ClientFixture.host("example.com", keys: [chain.root]),  // no include-subdomains: does not cover
        ], policy: policy)
        let result = pins.evaluate(host: "login.example.com", chain: chain.validated)
        #expect(result == .pinlessEntryRefused(host: "login.example.com", entries: [try Hostname("login.example.com")]))
        #expect(!result.isTrusted)
        #expect(result.description.contains("without any pin"))
        // A host no entry mentions still follows the policy.
        #expect(pins.evaluate(host: "www.example.org", chain: []).isTrusted == (policy == .allow))
    }

    @Test func mismatchReportsThePresentedKeys() async throws {
        let chain = try TestChain()
        let pins = try await evaluator([try ClientFixture.host("api.example.com", pins: ["some-other-key"])])
        let result = pins.evaluate(host: "api.example.com", chain: chain.validated)
        #expect(result == .pinMismatch(
            host: "api.example.com",
            entry: try Hostname("api.example.com"),
            presented: [chain.leaf.spkiSHA256, chain.intermediate.spkiSHA256, chain.root.spkiSHA256]
        ))
        #expect(!result.isTrusted)
        #expect(pins.evaluate(host: "api.example.com", chain: []) == .pinMismatch(host: "api.example.com", entry: try Hostname("api.example.com"), presented: []))
        #expect(!pins.evaluate(host: "api.example.com", chain: [Array("garbage".utf8)]).isTrusted)
    }

    @Test func unpinnedHostsAreAllowedByDefault() async throws {
        let chain = try TestChain(host: "www.example.org")
        let pins = try await evaluator([try ClientFixture.host("api.example.com", pins: ["k"])])
        #expect(pins.evaluate(host: "www.example.org", chain: chain.validated) == .notPinned(host: "www.example.org"))
        #expect(PinEvaluator().evaluate(host: "www.example.org", chain: []).isTrusted)
    }

    @Test func unpinnedHostsAreRefusedWhenConfigured() async throws {
        let chain = try TestChain(host: "www.example.org")
        let pins = try await evaluator([try ClientFixture.host("api.example.com", keys: [chain.leaf])], policy: .refuse)
        #expect(pins.evaluate(host: "www.example.org", chain: chain.validated) == .unpinnedHostRefused(host: "www.example.org"))
        #expect(pins.evaluate(host: "api.example.com", chain: [chain.leaf.certificateDER]).isTrusted)
        // Nothing loaded yet: everything is refused.
        #expect(PinEvaluator(unpinnedHostPolicy: .refuse).evaluate(host: "api.example.com", chain: []) == .unpinnedHostRefused(host: "api.example.com"))
    }
}

@Suite("Server trust: validation first, then pins")
struct ServerTrustEvaluatorTests {
    private func trust(_ hosts: [PinnedHost], roots: [TestPKI.Issued]) async throws -> ServerTrustEvaluator {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(hosts: hosts))
        return ServerTrustEvaluator(pins: updater.evaluator, trustRoots: TLSTrustRoots(certificates: roots.map(\.certificate)))
    }

    @Test func pinsAreCheckedAgainstTheValidatedChainIncludingTheRoot() async throws {
        let chain = try TestChain()
        let trust = try await trust([try ClientFixture.host("api.example.com", keys: [chain.root])], roots: [chain.root])
        let result = try await trust.evaluate(serverHostname: "api.example.com", presentedChain: chain.presented).get()
        #expect(result.validatedChain == chain.validated)
        #expect(result.evaluation.isTrusted)
    }

    @Test func aMatchingPinDoesNotRescueAnUntrustedChain() async throws {
        let chain = try TestChain()
        let otherRoot = try TestPKI.certificateAuthority(commonName: "Unrelated Root")
        let trust = try await trust([try ClientFixture.host("api.example.com", keys: [chain.leaf])], roots: [otherRoot])
        let result = await trust.evaluate(serverHostname: "api.example.com", presentedChain: chain.presented)
        #expect(throws: ServerTrustError(.chainValidation, "")) { try result.get() }
    }

    @Test func aMatchingPinDoesNotRescueAWrongHostName() async throws {
        let chain = try TestChain(host: "www.example.org")
        let trust = try await trust([try ClientFixture.host("api.example.com", keys: [chain.leaf])], roots: [chain.root])
        let result = await trust.evaluate(serverHostname: "api.example.com", presentedChain: chain.presented)
        #expect(throws: ServerTrustError(.chainValidation, "")) { try result.get() }
    }

    @Test func appendedPinnedCertificateDoesNotMatch() async throws {
        // The attacker's leaf comes from a CA the client trusts; it appends the genuine, public intermediate
        // that the host pins. Path building does not use it, so the pin does not match.
        let genuine = try TestChain(rootName: "Genuine Root")
        let attacker = try TestChain(rootName: "Attacker Root")
        let trust = try await trust([try ClientFixture.host("api.example.com", keys: [genuine.intermediate])], roots: [genuine.root, attacker.root])
        let presented = attacker.presented + [genuine.intermediate.certificateDER]
        let result = await trust.evaluate(serverHostname: "api.example.com", presentedChain: presented)
        #expect(throws: ServerTrustError(.pinMismatch, "")) { try result.get() }
    }

    /// A peer (a man in the middle with no certificate anyone trusts will do) that presents a mesh of certificates
    /// signing each other is refused by their number, before path building could spend hours on them; at the bound,
    /// path building runs and fails as for any untrusted chain.
    @Test func aPresentedCertificateMeshIsRefusedBeforePathBuilding() async throws {
        let trust = try await trust([], roots: [try TestPKI.certificateAuthority(commonName: "Real Root")])
        let large = try TestPKI.certificateMesh(keys: 4)
        let tooMany = [large.leaf.certificateDER] + (try large.mesh.map { try PinMaterial.derBytes(of: $0) })
        let refused = await trust.evaluate(serverHostname: "localhost", presentedChain: tooMany)
        guard case .failure(let error) = refused else { Issue.record("a mesh of 17 was accepted"); return }
        #expect(error.code == .chainValidation && error.reason.contains("presented 17 certificates; at most 16"), "\(error)")
        let atTheBound = Array(tooMany.prefix(PresentedChain.maximumCertificates))
        guard case .failure(let searched) = await trust.evaluate(serverHostname: "localhost", presentedChain: atTheBound) else {
            Issue.record("a mesh of 16 was accepted"); return
        }
        #expect(searched.code == .chainValidation && !searched.reason.contains("at most"), "\(searched)")
    }
}
