import Foundation
import PinsetCore
import PinsetLiveCheck
import Testing

/// The monitor warns before a publish window leaves a host listing no pin of the chain it serves.
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
        #expect(warned.warnings.contains { $0.contains("from \(PinWindow.format(leaving.notAfter!))") && $0.contains(spare.displayName) }, "\(warned.warnings)")

        // A pin of the live chain (its CA) entering before then: nothing to say.
        var replacement = Pin(spkiSHA256: try Self.key(3), source: PinSource(kind: .hash))
        replacement.window = try PinWindow(notBefore: Self.now.addingTimeInterval(60), notAfter: nil)
        let covered = HostPins(hostname: host.hostname, pins: [live, spare], scheduledPins: [replacement])
        let quiet = HostChecker.result(of: HostCheckJob(customer: try CustomerName("acme"), host: covered), against: chain, now: Self.now, expiryWarningDays: 14)
        #expect(!quiet.warnings.contains { $0.contains("match no certificate") }, "\(quiet.warnings)")
    }
}
