import Foundation
import PinsetAdmin
import PinsetCore
import PinsetFileSystem
import PinsetStore
import PinsetTestSupport
import Testing

/// `ACMERenewal`, the steps behind `pinset acme`, on a real SQLite deployment and real files, without an ACME server:
/// the status each key state ends in, what deploy installs and what it refuses. Time moves by injection: the gate
/// opens for a renewal that runs two hours after the key was pinned, with a server's figures in the store.
@Suite struct ACMERenewalTests {
    static let host = "api.example.com"

    /// customer acme, its host pinned on the deployed certificate's key (a test CA's, 90 days), and a configuration.
    struct Bed {
        let fixture: AdminFixture
        let ca: TestPKI.Issued
        let live: TestPKI.Issued
        let certificateFile: String
        let keyFile: String
        let configuration: ACMEConfiguration
        let messages = LockedValue<[String]>([])

        init(extra: String = "") throws {
            fixture = try AdminFixture()
            ca = try TestPKI.certificateAuthority()
            live = try TestPKI.leaf(commonName: ACMERenewalTests.host, dnsNames: [ACMERenewalTests.host], issuer: ca,
                                    notAfter: Date().addingTimeInterval(86_400 * 89))
            let tls = fixture.temporary.file("tls")
            try FileManager.default.createDirectory(atPath: tls, withIntermediateDirectories: true)
            certificateFile = try fixture.temporary.write("tls/api.crt", live.certificatePEM + "\n" + ca.certificatePEM + "\n")
            keyFile = try fixture.temporary.write("tls/api.key", live.privateKeyPEM + "\n", mode: 0o600)
            let acme = try CustomerName("acme"), api = try Hostname(ACMERenewalTests.host)
            try fixture.store.addCustomer(acme, actor: "test")
            try fixture.store.addHost(api, pins: [try PinMaterial.pin(base64SPKIHash: live.spkiSHA256.base64)], to: acme, actor: "test")
            configuration = try ACMEConfiguration.parse(fileText: """
                PINSET_CUSTOMER=acme
                PINSET_HOST=\(ACMERenewalTests.host)
                PINSET_MINIMUM_SHARE=0
                PINSET_ACME_STATE_DIR=\(fixture.temporary.file("state/api"))
                PINSET_ACME_CERT_FILE=\(certificateFile)
                PINSET_ACME_KEY_FILE=\(keyFile)
                PINSET_ACME_RELOAD=true
                PINSET_ACME_COMPLETE=no
                \(extra)
                """, path: "test.conf", environment: [:])
        }

        /// The steps, run `after` seconds from now.
        func renewal(after seconds: TimeInterval = 0, _ change: (inout ACMEConfiguration) -> Void = { _ in }) throws -> ACMERenewal {
            var configuration = configuration
            change(&configuration)
            let messages = messages
            let report = ACMEReporter(say: { line in messages.withLock { $0.append(line) } }, warn: { line in messages.withLock { $0.append(line) } })
            let now = Date().addingTimeInterval(seconds)
            return try ACMERenewal(configuration: configuration, admin: fixture.admin, report: report, now: { now })
        }

        /// A running server's settings in the store: the gate's time rule is then about a minute.
        func shareServerFigures() throws {
            try fixture.store.replaceUptakeSnapshot(UptakeSnapshot(
                instance: "test", windowSeconds: 60, servingTimes: ServingTimes(resignIntervalSeconds: 1, freshnessWindowSeconds: 60, maxAgeSeconds: 0),
                takenAt: Date(), validUntil: Date().addingTimeInterval(86_400), fetches: [:]
            ))
        }

        /// The host's pins: hash to whether it is next.
        func pins() throws -> [String: Bool] {
            let hosts = try fixture.store.rotationHosts(of: try CustomerName("acme"))
            return Dictionary(uniqueKeysWithValues: (hosts.first?.pins ?? []).compactMap { pin in pin.pin.spkiSHA256.map { ($0.base64, pin.isNext) } })
        }

        func file(_ path: String) -> [UInt8]? { fixture.bytes(path) }

        func mode(_ path: String) throws -> Int {
            ((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? NSNumber)?.intValue ?? -1
        }

        /// A chain for `key` (PEM file of a private key) from the test CA, written to a file.
        func issue(forKeyAt keyPath: String, names: [String] = [ACMERenewalTests.host]) throws -> String {
            let leaf = try TestPKI.leaf(commonName: names[0], dnsNames: names, issuer: ca, key: try ACMEKeyMaterial.privateKey(at: keyPath))
            return try fixture.temporary.write("issued-\(UUID().uuidString.prefix(6)).pem", leaf.certificatePEM + "\n" + ca.certificatePEM + "\n")
        }

        func remove() { fixture.remove() }
    }

    /// The status `body` stops with (nil when it returns), and the refusal.
    static func status(_ body: () throws -> Void) -> (ACMEFailure.Status?, ACMEFailure?) {
        do {
            try body()
            return (nil, nil)
        } catch let failure as ACMEFailure {
            return (failure.status, failure)
        } catch {
            Issue.record("not an ACMEFailure: \(error)")
            return (nil, nil)
        }
    }

    @Test func eachKeyStateEndsInItsDocumentedStatus() throws {
        let bed = try Bed()
        defer { bed.remove() }
        let renewal = try bed.renewal()
        #expect(try bed.mode(renewal.state.path) == 0o700)

        // No next key yet: 4 from status and prepare.
        #expect(Self.status { try renewal.status() }.0 == .noNextKey)
        let (noKey, noKeyFailure) = Self.status { _ = try renewal.prepare(whenDue: false, liveKeyFallback: false) }
        #expect(noKey == .noNextKey && noKeyFailure?.message.contains("Run 'pinset acme bootstrap'") == true)

        // bootstrap: a 0600 key, pinned as next; again: nothing changes.
        try renewal.bootstrap()
        let next = try ACMEKeyMaterial.pin(ofKeyAt: renewal.state.nextKey)
        #expect(try bed.mode(renewal.state.nextKey) == 0o600)
        #expect(try bed.pins() == [bed.live.spkiSHA256.base64: false, next: true])
        let keyBytes = bed.file(renewal.state.nextKey)
        try renewal.bootstrap()
        #expect(bed.file(renewal.state.nextKey) == keyBytes)
        #expect(bed.messages.withLock { $0.last?.contains("already pinned as next; nothing to do") } == true)

        // Pinned, but no server shares figures: 3, with the gate's reason, and no CSR.
        let (closed, closedFailure) = Self.status { _ = try renewal.prepare(whenDue: false, liveKeyFallback: false) }
        #expect(closed == .notYet)
        #expect(closedFailure?.detail?.contains("no running 'pinset serve'") == true, "\(closedFailure?.detail ?? "")")
        #expect(!AtomicFile.exists(renewal.state.nextCSR))
        // With a server's figures, too recent now; safe two hours on, when the CSR carries the next key.
        try bed.shareServerFigures()
        let (recent, recentFailure) = Self.status { _ = try renewal.prepare(whenDue: false, liveKeyFallback: false) }
        #expect(recent == .notYet && recentFailure?.detail?.contains("published too recently") == true)
        let later = try bed.renewal(after: 7200)
        #expect(Self.status { try later.status() }.0 == nil)
        let prepared = try #require(try later.prepare(whenDue: false, liveKeyFallback: false))
        #expect(prepared.key == .next && prepared.keyHash == next && prepared.request == later.state.nextCSR)
        let request = try PinMaterial.publicKey(fromCertificateRequestContents: try #require(bed.file(prepared.request)), origin: "csr")
        #expect(try ACMEKeyMaterial.pin(of: request) == next)

        // Not due with 89 of 90 days left (so `--when-due` prepares nothing), due with PINSET_ACME_RENEW_DAYS=100.
        #expect(try !later.isDue())
        #expect(try later.prepare(whenDue: true, liveKeyFallback: false) == nil)
        #expect(try bed.renewal { $0.renewDays = 100 }.isDue())
        #expect(try bed.renewal { $0.certificateFile = bed.fixture.temporary.file("tls/none.crt") }.isDue())

        // A next key that was never pinned (restored from a wrong backup): 4, with what it is.
        _ = try ACMEKeyMaterial.generateKey(.p256, at: later.state.nextKey)
        let (unpinned, unpinnedFailure) = Self.status { _ = try later.prepare(whenDue: false, liveKeyFallback: false) }
        #expect(unpinned == .noNextKey && unpinnedFailure?.detail?.contains("is not pinned for \(Self.host) at all") == true)
        #expect(unpinnedFailure?.message.contains("is not a next pin of \(Self.host)") == true)
        // A key others may read: refused with the fix.
        #expect(chmod(later.state.nextKey, 0o644) == 0)
        let (open, openFailure) = Self.status { _ = try later.prepare(whenDue: false, liveKeyFallback: false) }
        #expect(open == .error && openFailure?.message.contains("chmod 0600 '\(later.state.nextKey)'") == true, "\(openFailure?.message ?? "")")
    }

    @Test func deployInstallsOnlyTheGatedNextKeyAndPutsTheOldFilesBackWhenTheReloadFails() async throws {
        let bed = try Bed()
        defer { bed.remove() }
        try bed.renewal().bootstrap()
        try bed.shareServerFigures()
        let renewal = try bed.renewal(after: 7200)
        let next = try ACMEKeyMaterial.pin(ofKeyAt: renewal.state.nextKey)
        let before = [bed.file(bed.certificateFile), bed.file(bed.keyFile)]

        // A certificate for another key, or for another name: refused, nothing changed, nothing pinned.
        let stranger = bed.fixture.temporary.file("stranger.key")
        try ACMEKeyMaterial.generateKey(.p256, at: stranger)
        await #expect(throws: ACMEFailure.self) { try await renewal.deploy(chainFiles: [try bed.issue(forKeyAt: stranger)]) }
        let otherName = try bed.issue(forKeyAt: renewal.state.nextKey, names: ["www.example.com"])
        do { try await renewal.deploy(chainFiles: [otherName]); Issue.record("deployed a certificate for another name") } catch {
            #expect(error.status == .error && error.message.contains("not valid for \(Self.host)"))
        }
        #expect([bed.file(bed.certificateFile), bed.file(bed.keyFile)] == before)
        #expect(try bed.pins().count == 2 && !AtomicFile.exists(renewal.state.pendingKey))

        // The reload fails: the previous files are back; the following key stays pinned and pending, for a retry.
        let issued = try bed.issue(forKeyAt: renewal.state.nextKey)
        let failing = try bed.renewal(after: 7200) { $0.reloadCommand = "exit 1" }
        do { try await failing.deploy(chainFiles: [issued]); Issue.record("deployed with a failing reload") } catch {
            #expect(error.status == .error && error.message.contains("the previous certificate and key are back in place"), "\(error.message)")
        }
        #expect([bed.file(bed.certificateFile), bed.file(bed.keyFile)] == before)
        let following = try ACMEKeyMaterial.pin(ofKeyAt: renewal.state.pendingKey)
        #expect(try bed.pins() == [bed.live.spkiSHA256.base64: false, next: true, following: true])
        #expect(!AtomicFile.exists(renewal.state.rollbackCertificate) && !AtomicFile.exists(renewal.state.rollbackKey))

        // The retry: the next key and its chain installed (key 0600), the pending key reused as the next one.
        let nextKeyBytes = bed.file(renewal.state.nextKey)
        try await renewal.deploy(chainFiles: [issued])
        #expect(bed.file(bed.keyFile) == nextKeyBytes)
        #expect(try bed.mode(bed.keyFile) == 0o600)
        #expect(try ACMEKeyMaterial.pin(of: ACMEKeyMaterial.leaf(at: bed.certificateFile).publicKey) == next)
        #expect(try ACMEKeyMaterial.pin(ofKeyAt: renewal.state.nextKey) == following)
        #expect(try bed.pins() == [bed.live.spkiSHA256.base64: false, next: true, following: true], "PINSET_ACME_COMPLETE=no retires nothing")
        let left = try FileManager.default.contentsOfDirectory(atPath: renewal.state.path).filter { $0 != "lock" }
        #expect(left == ["next.key"], "\(left)")
    }

    @Test func aGateStillClosedNearExpiryRenewsWithThePinnedLiveKeyOnly() throws {
        let bed = try Bed(extra: "PINSET_ACME_REUSE_DAYS=100")
        defer { bed.remove() }
        let renewal = try bed.renewal()
        try renewal.bootstrap()
        let next = try ACMEKeyMaterial.pin(ofKeyAt: renewal.state.nextKey)

        // Without the fallback, the closed gate stands (3); with it, a CSR of the live key and a warning.
        #expect(Self.status { _ = try renewal.prepare(whenDue: false, liveKeyFallback: false) }.0 == .notYet)
        let prepared = try #require(try renewal.prepare(whenDue: false, liveKeyFallback: true))
        #expect(prepared.key == .live && prepared.keyHash == bed.live.spkiSHA256.base64)
        let request = try PinMaterial.publicKey(fromCertificateRequestContents: try #require(bed.file(renewal.state.liveCSR)), origin: "csr")
        #expect(try ACMEKeyMaterial.pin(of: request) == bed.live.spkiSHA256.base64)
        #expect(bed.messages.withLock { $0.contains { $0.contains("Renewing with the LIVE key \(bed.live.spkiSHA256.base64)") } })

        // The deploy installs the chain, leaves the key file as it is and exits 6; the rotation did not move.
        let keyBefore = bed.file(bed.keyFile)
        let renewed = try bed.issue(forKeyAt: bed.keyFile)
        let (status, warning) = Self.status { try renewal.deployLiveKey(chainFiles: [renewed]) }
        #expect(status == .reusedLiveKey && warning?.message.contains("Rotation postponed: no key was retired or added") == true)
        #expect(bed.file(bed.keyFile) == keyBefore)
        #expect(try bed.pins() == [bed.live.spkiSHA256.base64: false, next: true])
        #expect(!AtomicFile.exists(renewal.state.liveCSR))

        // A key file that is not the live, pinned key is never reused: the gate's refusal stands.
        let otherKey = bed.fixture.temporary.file("tls/other.key")
        try ACMEKeyMaterial.generateKey(.p256, at: otherKey)
        let unpinnedLive = try bed.renewal { $0.keyFile = otherKey }
        let (refused, failure) = Self.status { _ = try unpinnedLive.prepare(whenDue: false, liveKeyFallback: true) }
        #expect(refused == .notYet && failure?.message.contains("the live key cannot be reused") == true, "\(failure?.message ?? "")")
    }
}
