import Foundation
import PinsetCore
@testable import PinsetDashboard
import PinsetLiveCheck
import Testing

/// What operators are told about publish windows: the monitor warns before a window leaves a host listing no pin of
/// the chain it serves, and the dashboard shows each pin's window.
@Suite struct PinWindowMonitorTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func key(_ byte: UInt8) throws -> SHA256Fingerprint { try SHA256Fingerprint(bytes: [UInt8](repeating: byte, count: 32)) }

    @Test func aWindowThatWouldLeaveNoPinOfTheLiveChainIsWarnedAbout() throws {
        let leaving = try PinWindow(notBefore: nil, notAfter: Self.now.addingTimeInterval(3600))
        var live = Pin(spkiSHA256: try Self.key(1), source: PinSource(kind: .hash))
        live.window = leaving
        let spare = Pin(spkiSHA256: try Self.key(2), source: PinSource(kind: .hash))
        let chain = [
            LiveCertificate(position: 0, spkiSHA256: try Self.key(1), certificateSHA256: try Self.key(8), subject: "CN=api", notAfter: Self.now.addingTimeInterval(86_400 * 90)),
            LiveCertificate(position: 1, spkiSHA256: try Self.key(3), certificateSHA256: try Self.key(9), subject: "CN=CA", notAfter: Self.now.addingTimeInterval(86_400 * 900)),
        ]
        let host = HostPins(hostname: try Hostname("api.example.com"), pins: [live, spare])
        let warned = HostChecker.result(of: HostCheckJob(customer: try CustomerName("acme"), host: host), against: chain, now: Self.now, expiryWarningDays: 14)
        #expect(warned.state == .matches)
        let leaves = PinWindow.format(try #require(leaving.notAfter))
        #expect(warned.warnings.contains { $0.contains("from \(leaves)") && $0.contains(spare.displayName) }, "\(warned.warnings)")

        // A pin of the live chain (its CA) entering before then: nothing to say.
        var replacement = Pin(spkiSHA256: try Self.key(3), source: PinSource(kind: .hash))
        replacement.window = try PinWindow(notBefore: Self.now.addingTimeInterval(60), notAfter: nil)
        let covered = HostPins(hostname: host.hostname, pins: [live, spare], scheduledPins: [replacement])
        let quiet = HostChecker.result(of: HostCheckJob(customer: try CustomerName("acme"), host: covered), against: chain, now: Self.now, expiryWarningDays: 14)
        #expect(!quiet.warnings.contains { $0.contains("match no certificate") }, "\(quiet.warnings)")
    }

    /// The dashboard says beside a pin whether the bundle lists it, its window, and when that changes next.
    @Test func theDashboardShowsAPinsWindow() throws {
        var pin = Pin(spkiSHA256: try Self.key(1), source: PinSource(kind: .hash))
        let window = try PinWindow(notBefore: nil, notAfter: Date().addingTimeInterval(86_400))
        pin.window = window
        let end = PinWindow.format(try #require(window.notAfter))
        let listed = DashboardPages.publishWindow(pin, listed: true).rendered
        #expect(listed.contains("listed; publish window now .. \(end); leaves the bundle at \(end)"), "\(listed)")
        pin.window = nil
        #expect(DashboardPages.publishWindow(pin, listed: true).rendered.isEmpty)
    }
}
