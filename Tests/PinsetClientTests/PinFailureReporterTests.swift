import Foundation
@testable import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// A sender that records what it was given and answers with the status the test sets (0 = unreachable).
final class RecordingReportSender: PinFailureReportSender, @unchecked Sendable {
    private let lock = NSLock()
    private var _sent: [[UInt8]] = []
    private var _status = 202
    var sent: [[UInt8]] { lock.withLock { _sent } }
    var status: Int {
        get { lock.withLock { _status } }
        set { lock.withLock { _status = newValue } }
    }

    struct Unreachable: Error {}

    func send(_ report: [UInt8], to url: URL, timeout: Duration) async throws -> Int {
        try lock.withLock {
            guard _status != 0 else { throw Unreachable() }
            _sent.append(report)
            return _status
        }
    }
}

@Suite("Pin-failure reports from the client")
struct PinFailureReporterTests {
    let chain: TestChain
    let fixture: ClientFixture
    static let reportURL = URL(string: "http://127.0.0.1:9/report/acme")!
    let settings: PinFailureReportConfiguration

    init() throws {
        settings = try PinFailureReportConfiguration(reportURL: Self.reportURL, appBundleID: "com.example.app", appVersion: "3.1")
        chain = try TestChain()
        fixture = try ClientFixture()
    }

    func event(_ host: String = "api.example.com", at seconds: TimeInterval = 1_800_000_000) throws -> PinFailureEvent {
        PinFailureEvent(host: try Hostname(host), entry: try ClientFixture.host(host, keys: [chain.intermediate]), chain: chain.validated,
                        pinSetVersion: 7, at: Date(timeIntervalSince1970: seconds))
    }

    func reporter(_ sender: RecordingReportSender, settings: PinFailureReportConfiguration? = nil) -> PinFailureReporter {
        PinFailureReporter(configuration: fixture.configuration, settings: settings ?? self.settings, sender: sender)
    }

    @Test func aReportIsPinsetsFormatAndParsesAsOne() async throws {
        defer { fixture.directory.remove() }
        let sender = RecordingReportSender()
        await reporter(sender).record(try event())
        let sent = try #require(sender.sent.first)
        let report = try PinFailureReport.parse(sent)
        #expect(report.hostname == "api.example.com")
        #expect(report.pinsetVersion == 7)
        #expect(report.appVersion == "3.1")
        #expect(report.validationResult == PinFailureReport.noMatchingPin)
        #expect(report.knownPins == ["pin-sha256=\"\(chain.intermediate.spkiSHA256.base64)\""])
        #expect(try report.leafSPKISHA256() == chain.leaf.spkiSHA256)
    }

    @Test func oneReportPerHostPerIntervalEvenAcrossRestarts() async throws {
        defer { fixture.directory.remove() }
        let sender = RecordingReportSender()
        await reporter(sender).record(try event(at: 1_800_000_000))
        await reporter(sender).record(try event(at: 1_800_000_100))
        await reporter(sender).record(try event("www.example.com", at: 1_800_000_200))
        #expect(sender.sent.count == 2)
        await reporter(sender).record(try event(at: 1_800_003_601))
        #expect(sender.sent.count == 3, "a new interval reports again")
    }

    @Test func undeliveredReportsAreQueuedPrivatelyAndSentAfterARestart() async throws {
        defer { fixture.directory.remove() }
        let sender = RecordingReportSender()
        sender.status = 0
        let first = reporter(sender)
        await first.record(try event("a.example.com"))
        await first.record(try event("b.example.com"))
        #expect(await first.pendingCount == 2)
        let path = fixture.configuration.reportQueuePath
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        sender.status = 503
        let second = reporter(sender)
        await second.sendPending()
        #expect(await second.pendingCount == 2, "a 503 keeps the reports")
        sender.status = 202
        await second.sendPending()
        #expect(await second.pendingCount == 0)
        // The 503 answered the first attempt at the oldest report; both then went out, oldest first.
        #expect(try sender.sent.map { try PinFailureReport.parse($0).hostname } == ["a.example.com", "a.example.com", "b.example.com"])
    }

    @Test func theQueueIsBoundedByCountAndBytesDroppingTheOldest() async throws {
        defer { fixture.directory.remove() }
        let sender = RecordingReportSender()
        sender.status = 0
        let bounded = try PinFailureReportConfiguration(reportURL: Self.reportURL, appBundleID: "com.example.app", appVersion: "3.1", maximumQueuedReports: 3)
        let reporter = reporter(sender, settings: bounded)
        for index in 0..<10 { await reporter.record(try event("h\(index).example.com")) }
        #expect(await reporter.pendingCount == 3)
        let queue = try #require(PinFailureReportQueue.load(from: fixture.configuration.reportQueuePath))
        #expect(try queue.pending.map { try PinFailureReport.parse(Array($0.utf8)).hostname } == ["h7.example.com", "h8.example.com", "h9.example.com"])

        let small = try PinFailureReportConfiguration(
            reportURL: Self.reportURL, appBundleID: "com.example.app", appVersion: "3.1", maximumQueueBytes: queue.pending[0].utf8.count + 10
        )
        let bytesBounded = PinFailureReporter(configuration: fixture.configuration, settings: small, sender: sender)
        await bytesBounded.record(try event("z.example.com"))
        #expect(await bytesBounded.pendingCount == 1)
    }

    @Test func aDamagedQueueFileIsReplacedAndNeverAffectsReporting() async throws {
        defer { fixture.directory.remove() }
        let path = fixture.configuration.reportQueuePath
        try FileManager.default.createDirectory(atPath: fixture.configuration.stateDirectory, withIntermediateDirectories: true)
        try Data("{\"installation-id\": 7, \"pending\": [".utf8).write(to: URL(fileURLWithPath: path))
        let sender = RecordingReportSender()
        sender.status = 0
        let reporter = reporter(sender)
        await reporter.record(try event())
        let queue = try #require(PinFailureReportQueue.load(from: path))
        #expect(queue.pending.count == 1)
        #expect(!queue.installationID.isEmpty)
    }

    /// Settings under which the server would refuse every report, or no report could be queued, are refused
    /// with the setting's name.
    @Test func settingsThatWouldLoseEveryReportAreRefused() {
        let url = Self.reportURL
        let cases: [(String, () throws(InputError) -> PinFailureReportConfiguration)] = [
            ("appVersion", { () throws(InputError) in try PinFailureReportConfiguration(reportURL: url, appBundleID: "com.example.app", appVersion: String(repeating: "9", count: 65)) }),
            ("appBundleID", { () throws(InputError) in try PinFailureReportConfiguration(reportURL: url, appBundleID: "", appVersion: "1.0") }),
            ("appVersion", { () throws(InputError) in try PinFailureReportConfiguration(reportURL: url, appBundleID: "com.example.app", appVersion: "1.0\u{0}") }),
            ("maximumQueuedReports", { () throws(InputError) in try PinFailureReportConfiguration(reportURL: url, appBundleID: "a", appVersion: "1", maximumQueuedReports: -1) }),
            ("perHostInterval", { () throws(InputError) in try PinFailureReportConfiguration(reportURL: url, appBundleID: "a", appVersion: "1", perHostInterval: .zero) }),
            ("reportURL", { () throws(InputError) in try PinFailureReportConfiguration(reportURL: URL(string: "ftp://example.com/r")!, appBundleID: "a", appVersion: "1") }),
        ]
        for (setting, make) in cases {
            let error = #expect(throws: InputError.self) { try make() }
            #expect(error?.message.contains(setting) == true, "\(setting): \(String(describing: error))")
        }
    }

    @Test func aDisabledReporterSendsAndStoresNothing() async throws {
        defer { fixture.directory.remove() }
        let sender = RecordingReportSender()
        var off = settings
        off.isEnabled = false
        await reporter(sender, settings: off).record(try event())
        #expect(sender.sent.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.configuration.reportQueuePath))
    }

    @Test func theEvaluatorHandsMismatchesToTheUpdatersReporterOnly() async throws {
        defer { fixture.directory.remove() }
        var fixture = fixture
        fixture.configuration.failureReports = settings
        let sender = RecordingReportSender()
        let clock = fixture.clock
        let updater = PinsetUpdater(configuration: fixture.configuration, fetcher: fixture.fetcher, reportSender: sender, now: clock.now)
        try await fixture.update(updater, with: try fixture.payload(hosts: [try ClientFixture.host("api.example.com", keys: [chain.intermediate])]))
        #expect(updater.evaluator.evaluate(host: "api.example.com", chain: chain.validated).isTrusted)
        let other = try TestChain(rootName: "Other Root CA")
        #expect(!updater.evaluator.evaluate(host: "api.example.com", chain: other.validated).isTrusted)
        for _ in 0..<1_500 where sender.sent.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        #expect(sender.sent.count == 1)
        #expect(try PinFailureReport.parse(try #require(sender.sent.first)).leafSPKISHA256() == other.leaf.spkiSHA256)
    }
}
