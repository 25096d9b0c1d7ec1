import Foundation
import PinsetClient
import PinsetCore
import PinsetSigning
import PinsetTestSupport
import Testing
import X509

/// Every refused update, each named after the attack or fault. Each starts from an accepted version 5 and
/// checks that afterwards the pins in force and the state file are exactly as before.
@Suite("Update rejections")
struct UpdateRejectionTests {
    /// Runs `attack` against an updater holding version 5 and returns the error, after checking nothing changed.
    private func rejection(
        _ fixture: ClientFixture,
        _ attack: (ClientFixture) throws -> Void
    ) async throws -> PinUpdateError {
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        let accepted = try await fixture.update(updater, with: try fixture.payload(version: 5))
        let fileBefore = try #require(fixture.stateFileBytes())
        try attack(fixture)
        let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
        #expect(await updater.currentPinSet?.payload == accepted.payload)
        #expect(fixture.stateFileBytes() == fileBefore)
        // A fresh process sees the same stored pins.
        let restarted = fixture.makeUpdater()
        guard case .loaded(let stored) = await restarted.loadStoredPins() else {
            Issue.record("the stored state did not survive the refused update")
            return error
        }
        #expect(stored.payload == accepted.payload)
        return error
    }

    @Test func tamperedPayloadByteBreaksTheSignature() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            var bytes = try f.signed(try f.payload(version: 6))
            let marker = Array("api.example.com".utf8)
            let start = try #require(bytes.indices.first { bytes[$0...].starts(with: marker) })
            bytes[start] = UInt8(ascii: "x")
            f.fetcher.serve(bytes)
        }
        #expect(error.code == .signature(.invalidSignature))
    }

    @Test func bundleSignedByAnotherKeyWithTheSameNameIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            // Same subject name as the trusted certificate, different key: a look-alike.
            let impostor = try TestPKI.signingIdentity()
            #expect(impostor.certificate.subject == f.identity.certificate.subject)
            f.fetcher.serve(try f.signed(try f.payload(version: 6), by: impostor))
        }
        #expect(error.code == .signature(.untrustedSigner))
    }

    @Test func signerIssuedByAnUntrustedAuthorityIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            let otherCA = try TestPKI.certificateAuthority(commonName: "Some Other CA")
            let leaf = try TestPKI.leaf(commonName: "Pinset Test Trust Server", issuer: otherCA)
            let signer = try SigningIdentity(privateKey: leaf.privateKey, certificate: leaf.certificate, intermediates: [otherCA.certificate])
            f.fetcher.serve(try f.signed(try f.payload(version: 6), by: signer))
        }
        #expect(error.code == .signature(.untrustedSigner))
    }

    @Test func sha1SignatureIsRefusedAsAWeakDigest() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            let work = try TemporaryDirectory(prefix: "pinset-sha1")
            defer { work.remove() }
            let certificate = try work.write("cert.pem", f.identity.certificatePEM + "\n")
            let key = try work.write("key.pem", try f.identity.privateKey.serializeAsPEM().pemString + "\n", mode: 0o600)
            let content = try work.write("payload.json", try f.payload(version: 6).encoded())
            let output = work.file("bundle.der")
            let result = try ProcessRunner.run("openssl", [
                "cms", "-sign", "-md", "sha1", "-binary", "-nodetach", "-outform", "der",
                "-signer", certificate, "-inkey", key, "-in", content, "-out", output,
            ])
            #expect(result.status == 0, "openssl: \(result.stderr)")
            f.fetcher.serve(try AtomicFileBytes.read(output))
        }
        #expect(error.code == .signature(.weakDigestAlgorithm))
    }

    @Test func bundleForAnotherCustomerIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try f.signed(try f.payload(version: 6, customer: try CustomerName("globex"))))
        }
        #expect(error.code == .wrongCustomer)
    }

    @Test func replayOfAStaleBundleIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try f.signed(try f.payload(version: 6, signedAgo: 601)))
        }
        #expect(error.code == .stale)
    }

    @Test func bundleFromTheFutureIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try f.signed(try f.payload(version: 6, signedAgo: -61)))
        }
        #expect(error.code == .fromTheFuture)
    }

    @Test func expiredBundleIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try f.signed(try f.payload(version: 6, signedAgo: 10, expiresIn: -1)))
        }
        #expect(error.code == .expired)
    }

    /// Valid while `now < expires`: at the second of `expires` the bundle is already refused.
    @Test func bundleIsRefusedAtItsExpiryInstant() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try f.signed(try f.payload(version: 6, signedAgo: 10, expiresIn: 0)))
        }
        #expect(error.code == .expired)
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let accepted = try await fixture.update(fixture.makeUpdater(), with: try fixture.payload(version: 6, signedAgo: 10, expiresIn: 1))
        #expect(accepted.version == 6)
    }

    @Test func rollbackToAnOlderVersionIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try f.signed(try f.payload(version: 4)))
        }
        #expect(error.code == .rollback)
    }

    @Test func sameVersionWithDifferentPinsIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            let hosts = [try ClientFixture.host("api.example.com", pins: ["attacker-key"])]
            f.fetcher.serve(try f.signed(try f.payload(version: 5, hosts: hosts)))
        }
        #expect(error.code == .versionContentMismatch)
    }

    /// Host names compare ignoring case, and so does the content digest: the same pins with a host name spelt
    /// differently are the same content, not a forged version.
    @Test func sameVersionDifferingOnlyInHostNameCaseIsAccepted() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        let updater = fixture.makeUpdater()
        try await fixture.update(updater, with: try fixture.payload(version: 5))
        let respelt = [try ClientFixture.host("API.Example.COM", pins: ["api-key"])]
        fixture.clock.advance(by: 1)
        let accepted = try await fixture.update(updater, with: try fixture.payload(version: 5, hosts: respelt))
        #expect(accepted.payload.hosts.first?.hostname.spelling == "API.Example.COM")
    }

    @Test func truncatedBodyIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            let bytes = try f.signed(try f.payload(version: 6))
            f.fetcher.serve(Array(bytes.prefix(bytes.count / 2)))
        }
        #expect(error.code == .signature(.malformedSignedData))
    }

    @Test func oversizedBodyIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve([UInt8](repeating: 0x30, count: f.configuration.maximumBundleSize + 1))
        }
        #expect(error.code == .bodyTooLarge)
    }

    @Test func bodyThatIsNotDERIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(Array("<html>Service Unavailable</html>".utf8))
        }
        #expect(error.code == .signature(.malformedSignedData))
    }

    @Test func signedContentThatIsNotJSONIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.serve(try BundleSigner(identity: f.identity).sign(content: Array("customer=acme".utf8)))
        }
        #expect(error.code == .malformedPayload)
    }

    @Test func signedTimestampAsAStringIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            let payload = try f.payload(version: 6)
            let json = String(decoding: payload.encoded(), as: UTF8.self)
            let wrong = json.replacingOccurrences(of: "\"timestamp\":\(payload.timestamp)", with: "\"timestamp\":\"\(payload.timestamp)\"")
            #expect(wrong != json)
            f.fetcher.serve(try BundleSigner(identity: f.identity).sign(content: Array(wrong.utf8)))
        }
        #expect(error.code == .malformedPayload)
        #expect(error.reason.contains("timestamp"))
    }

    @Test func signedPortAsANumberIsRefused() async throws {
        let error = try await rejection(try ClientFixture()) { f in
            let json = String(decoding: try f.payload(version: 6).encoded(), as: UTF8.self)
            let wrong = json.replacingOccurrences(of: "\"port\":\"443\"", with: "\"port\":443")
            #expect(wrong != json)
            f.fetcher.serve(try BundleSigner(identity: f.identity).sign(content: Array(wrong.utf8)))
        }
        #expect(error.code == .malformedPayload)
        #expect(error.reason.contains("port"))
    }

    @Test(arguments: [404, 500, 304])
    func httpStatusOtherThan200IsRefused(status: Int) async throws {
        let error = try await rejection(try ClientFixture()) { f in
            // Even a valid bundle in the body does not make a non-200 answer acceptable.
            f.fetcher.serve(try f.signed(try f.payload(version: 6)), status: status)
        }
        #expect(error.code == .httpStatus(status))
    }

    @Test func transportFailureIsReportedAsTransport() async throws {
        struct ConnectionRefused: Error {}
        let error = try await rejection(try ClientFixture()) { f in
            f.fetcher.fail(ConnectionRefused())
        }
        #expect(error.code == .transport)
    }

    /// A verified bundle that cannot be written is in force all the same (refusing it would keep no pins, or older
    /// ones, for the rest of the process), the updater says why the file is behind, and the next accepted bundle,
    /// the same version again, writes it once it can.
    @Test func aBundleThatCannotBeWrittenIsInForceAndTheNextAcceptWritesIt() async throws {
        var fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        // A regular file where the state directory should be.
        let blocker = try fixture.directory.write("not-a-directory", "x")
        fixture.configuration.stateDirectory = blocker
        let updater = fixture.makeUpdater()
        let payload = try fixture.payload(version: 1)
        #expect(try await fixture.update(updater, with: payload).version == 1)
        #expect(await updater.currentPinSet?.version == 1)
        let failure = try #require(await updater.stateFileFailure)
        #expect(failure.code == .storage, "\(failure)")
        #expect(updater.evaluator.pinSet?.version == 1, "the TLS evaluation uses the verified pins")

        try FileManager.default.removeItem(atPath: blocker)
        #expect(try await fixture.update(updater, with: payload).version == 1)
        #expect(await updater.stateFileFailure == nil)
        guard case .loaded(let stored) = await fixture.makeUpdater().loadStoredPins() else {
            Issue.record("the state file was not written once it could be")
            return
        }
        #expect(stored.version == 1)
    }
}

/// Reads a whole file for a test.
enum AtomicFileBytes {
    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw PinsetFailure("cannot read \(path)") }
        return [UInt8](data)
    }
}
