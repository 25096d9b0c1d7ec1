import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing

@Suite("Stored state: offline start, crash safety, seeding")
struct StoredStateTests {
    @Test func offlineStartupUsesTheLastGoodPins() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let accepted = try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 3))

        fixture.fetcher.fail(PinUpdateError(.transport, "no network"))
        // A week later, long after freshness and expiry of the bundle: stored pins stay in force.
        fixture.clock.advance(by: 7 * 86_400)
        let restarted = fixture.makeUpdater()
        guard case .loaded(let stored) = await restarted.loadStoredPins() else {
            Issue.record("the stored pins were not loaded")
            return
        }
        #expect(stored.payload == accepted.payload)
        #expect(stored.origin == .stored)
        #expect(restarted.evaluator.pinSet?.payload == accepted.payload)
        let error = try await #require(throws: PinUpdateError.self) { try await restarted.update() }
        #expect(error.code == .transport)
        #expect(restarted.evaluator.pinSet?.payload == accepted.payload)
    }

    /// A state directory another local user can write (or owns) lets that user put back an older genuine bundle:
    /// it is neither read nor written, and the refusal says how to fix it. A verified download is in force in
    /// memory all the same. A new one is made 0700.
    @Test(arguments: [0o777 as mode_t, 0o770, 0o722]) func aStateDirectoryOthersCanWriteIsRefused(mode: mode_t) async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 3))
        #expect(chmod(fixture.configuration.stateDirectory, mode) == 0)
        let stored = try #require(fixture.stateFileBytes())

        let restarted = fixture.makeUpdater()
        guard case .rejected(let loadError) = await restarted.loadStoredPins() else {
            Issue.record("pins were read from a directory others can write")
            return
        }
        #expect(loadError.code == .storage && loadError.reason.contains("chmod 700"), "\(loadError.reason)")
        #expect(try await fixture.update(restarted, with: try fixture.payload(version: 4)).version == 4)
        let error = try #require(await restarted.stateFileFailure)
        #expect(error.code == .storage, "\(error)")
        #expect(error.reason.contains("group or others can write it (mode \(String(mode, radix: 8)))") && error.reason.contains("chmod 700"), "\(error.reason)")
        #expect(fixture.stateFileBytes() == stored, "nothing was written into it")

        // Fixed as the message says, it is used again.
        #expect(chmod(fixture.configuration.stateDirectory, 0o700) == 0)
        #expect(try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 4)).version == 4)
    }

    /// Handing the directory to another user needs root (as in CI).
    @Test(.enabled(if: geteuid() == 0)) func aStateDirectoryOwnedByAnotherUserIsRefused() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 3))
        let nobody: uid_t = getpwnam("nobody")?.pointee.pw_uid ?? 65534
        #expect(chown(fixture.configuration.stateDirectory, nobody, getegid()) == 0)
        guard case .rejected(let error) = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("pins were read from a directory another user owns")
            return
        }
        #expect(error.code == .storage && error.reason.contains("owned by 'nobody'") && error.reason.contains("chown"), "\(error.reason)")
    }

    @Test func aNewStateDirectoryIsPrivate() async throws {
        var fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        fixture.configuration.stateDirectory = fixture.directory.file("app/data/state")
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 3))
        for path in ["app", "app/data", "app/data/state"] {
            var info = stat()
            #expect(stat(fixture.directory.file(path), &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700, "\(path): \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    @Test func missingStateIsReportedAsMissing() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        guard case .missing = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("expected no state")
            return
        }
    }

    /// Writes `corrupt(original)` over the state file and checks that it is refused and treated as no state.
    private func expectRejected(_ corrupt: ([UInt8]) -> [UInt8]) async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 3))
        let original = try #require(fixture.stateFileBytes())
        let damaged = corrupt(original)
        #expect(damaged != original)
        try fixture.directory.write("state/acme.pinset-state", damaged)

        let restarted = fixture.makeUpdater()
        guard case .rejected = await restarted.loadStoredPins() else {
            Issue.record("a damaged state file was read as valid")
            return
        }
        #expect(restarted.evaluator.pinSet == nil)
        #expect(restarted.evaluator.evaluate(host: "api.example.com", chain: []) == .notPinned(host: "api.example.com"))
        // The next good bundle replaces it.
        try await fixture.update(restarted, with: try fixture.payload(version: 1))
        guard case .loaded(let repaired) = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("the state file was not repaired")
            return
        }
        #expect(repaired.version == 1)
    }

    /// The stored content digest hashes host names lower-case, as the library did before bundles kept the
    /// operator's spelling: a state file written then still loads, so an upgrade keeps the app's pins.
    @Test func stateOfAMixedCaseBundleLoadsWithTheLowerCaseDigest() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let mixed = try fixture.payload(version: 3, hosts: [ClientFixture.host("API.Example.com", pins: ["api-key"])])
        try await fixture.update(fixture.makeUpdater(), with: mixed)

        let lower = try ClientFixture.host("api.example.com", pins: ["api-key"])
        let earlierDigest = SHA256Fingerprint(
            of: Array("{\"customer\":\"acme\",\"version\":3,\"hashes\":".utf8) + BundlePayload.encodedHosts([lower]) + Array("}".utf8)
        ).hex
        let original = try #require(fixture.stateFileBytes())
        // The header line, then the metadata line; the signed bundle after it is binary.
        let metadata = String(decoding: original.split(separator: UInt8(ascii: "\n"), maxSplits: 2)[1], as: UTF8.self)
        #expect(metadata.contains("\"content-sha256\":\"\(earlierDigest)\""), "\(metadata)")
        #expect(original.firstRange(of: Array("\"hostname\":\"API.Example.com\"".utf8)) != nil)

        guard case .loaded(let stored) = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("the stored pins of a mixed-case bundle were not loaded")
            return
        }
        #expect(stored.payload.hosts.first?.hostname.spelling == "API.Example.com")
        #expect(stored.contentDigest.hex == earlierDigest)
    }

    @Test func halfWrittenStateFileIsNotValid() async throws {
        try await expectRejected { Array($0.prefix($0.count / 2)) }
    }

    @Test func stateFileMissingItsLastByteIsNotValid() async throws {
        try await expectRejected { Array($0.dropLast()) }
    }

    @Test func flippedByteInTheStoredBundleIsNotValid() async throws {
        try await expectRejected { bytes in
            var copy = bytes
            copy[copy.count - 20] ^= 0x01
            return copy
        }
    }

    @Test func flippedByteInTheStoredPayloadIsNotValid() async throws {
        try await expectRejected { bytes in
            var copy = bytes
            let marker = Array("api.example.com".utf8)
            // Host names occur only inside the signed bundle; the metadata names none.
            if let start = copy.indices.first(where: { copy[$0...].starts(with: marker) }) {
                copy[start] = UInt8(ascii: "b")
            }
            return copy
        }
    }

    @Test func editedVersionInTheMetadataIsNotValid() async throws {
        try await expectRejected { bytes in
            // Same length, so only the claim changes, not the layout.
            var copy = bytes
            let field = Array("\"version\":3".utf8)
            if let start = copy.indices.first(where: { copy[$0...].starts(with: field) }) {
                copy[start + field.count - 1] = UInt8(ascii: "9")
            }
            return copy
        }
    }

    @Test func stateFileThatIsJustTheBundleIsNotValid() async throws {
        try await expectRejected { bytes in
            Array(bytes.drop { $0 != UInt8(ascii: "\n") }.dropFirst().drop { $0 != UInt8(ascii: "\n") }.dropFirst())
        }
    }

    @Test func seedShippedWithTheAppIsAcceptedWithoutFreshness() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        // Built 30 minutes ago, well past the 10-minute freshness window.
        let seed = try fixture.signed(try fixture.payload(version: 2, signedAgo: 1800))
        let updater = fixture.makeUpdater()
        let seeded = try await updater.seed(withBundle: seed)
        #expect(seeded.origin == .seed)
        #expect(updater.evaluator.pinSet?.version == 2)
        // Stored, and re-verified on the next start.
        guard case .loaded(let stored) = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("the seed was not stored")
            return
        }
        #expect(stored.version == 2)
    }

    @Test func seedOlderThanTheStoredPinsIsRefusedAsRollback() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 5))
        let restarted = fixture.makeUpdater()
        let seed = try fixture.signed(try fixture.payload(version: 2, signedAgo: 1800))
        let error = try await #require(throws: PinUpdateError.self) { try await restarted.seed(withBundle: seed) }
        #expect(error.code == .rollback)
        #expect(await restarted.currentPinSet?.version == 5)
    }

    /// An app is installed months after its release: the seed it ships has expired, and so has the certificate that
    /// signed it. It still pins the first launch, checked at the time it was signed; as a download it is refused.
    @Test func aSeedIsAcceptedAfterItAndItsSignerExpired() async throws {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let root = try SigningRoot.generate(keyType: .p256, commonName: "Seed Root", validityDays: 3650, now: now.addingTimeInterval(-400 * 86_400))
        let request = try SignerRequest.generate(keyType: .p256, commonName: "signer of the release")
        let releaseTime = now.addingTimeInterval(-200 * 86_400)
        let certificate = try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: 30), now: releaseTime)
        let releaseSigner = try SigningIdentity(privateKey: request.privateKey, certificate: certificate, intermediates: [root.certificate])
        let fixture = try ClientFixture(anchors: [root.certificate], identity: releaseSigner)
        defer { fixture.directory.remove() }
        let seed = try fixture.signed(try fixture.payload(version: 2, signedAgo: 200 * 86_400, expiresIn: -199 * 86_400))

        let updater = fixture.makeUpdater()
        let seeded = try await updater.seed(withBundle: seed)
        #expect(seeded.version == 2 && seeded.origin == .seed)
        #expect(fixture.stateFileBytes() != nil)

        fixture.fetcher.serve(seed)
        let download = try await #require(throws: PinUpdateError.self) { try await fixture.makeUpdater().update() }
        #expect(download.code == .signature(.untrustedSigner), "\(download)")
    }

    /// A fresh download that says it was signed before its certificate was valid is refused: accepted, it would be
    /// refused when the state file is verified again at that time, and the next start would have no pins.
    @Test func aDownloadSignedBeforeItsSignerWasValidIsRefused() async throws {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let root = try SigningRoot.generate(keyType: .p256, commonName: "Download Root", validityDays: 3650, now: now.addingTimeInterval(-86_400))
        let request = try SignerRequest.generate(keyType: .p256, commonName: "new signer")
        let certificate = try root.issue(for: request.request, policy: SignerCertificatePolicy(validityDays: 30), now: now.addingTimeInterval(-120))
        let signer = try SigningIdentity(privateKey: request.privateKey, certificate: certificate, intermediates: [root.certificate])
        let fixture = try ClientFixture(anchors: [root.certificate], identity: signer)
        defer { fixture.directory.remove() }
        let before = Int64(now.timeIntervalSince(certificate.notValidBefore)) + 60
        #expect(before < 600, "fresh, so that only the signing time refuses it")
        try fixture.fetcher.serve(fixture.signed(try fixture.payload(version: 2, signedAgo: before)))
        let error = try await #require(throws: PinUpdateError.self) { try await fixture.makeUpdater().update() }
        #expect(error.code == .signature(.untrustedSigner) && error.reason.contains("outside the validity"), "\(error)")
        #expect(fixture.stateFileBytes() == nil)
    }

    /// A seed that says it was signed before its certificate was valid is refused: its chain is checked at the time
    /// it claims, when the certificate did not exist yet.
    @Test func aSeedSignedOutsideItsSignersValidityIsRefused() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let notBefore = fixture.identity.certificate.notValidBefore.timeIntervalSinceNow
        let seed = try fixture.signed(try fixture.payload(version: 2, signedAgo: Int64(-notBefore) + 60))
        let error = try await #require(throws: PinUpdateError.self) { try await fixture.makeUpdater().seed(withBundle: seed) }
        #expect(error.code == .signature(.untrustedSigner), "\(error)")
        #expect(fixture.stateFileBytes() == nil)
    }

    @Test func seedSignedByAnUntrustedKeyIsRefused() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let seed = try fixture.signed(try fixture.payload(version: 2, signedAgo: 1800), by: try TestPKI.signingIdentity(commonName: "Elsewhere"))
        let updater = fixture.makeUpdater()
        let error = try await #require(throws: PinUpdateError.self) { try await updater.seed(withBundle: seed) }
        #expect(error.code == .signature(.untrustedSigner))
        #expect(fixture.stateFileBytes() == nil)
    }

    @Test func storedStateSignedForAnotherCustomerIsNotLoaded() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 1))
        var other = fixture
        other.configuration.customer = try CustomerName("globex")
        // Put acme's state file where globex's belongs.
        try FileManager.default.copyItem(atPath: fixture.configuration.stateFilePath, toPath: other.configuration.stateFilePath)
        guard case .rejected(let error) = await other.makeUpdater().loadStoredPins() else {
            Issue.record("another customer's state was loaded")
            return
        }
        #expect(error.code == .wrongCustomer)
    }
}
