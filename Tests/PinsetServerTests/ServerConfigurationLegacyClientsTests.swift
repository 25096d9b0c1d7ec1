import Foundation
import PinsetServer
import Testing

/// Settings valid for Pinset clients that break legacy GCX clients (600 s freshness, no setting of their own).
struct ServerConfigurationLegacyClientsTests {
    func configuration(freshness: Int64 = 600, resign: Double = 300) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.freshnessWindowSeconds = freshness
        configuration.resignIntervalSeconds = resign
        return configuration
    }

    @Test func theDefaultsBreakNothing() {
        #expect(ServerConfiguration().legacyClientWarnings.isEmpty)
        #expect(configuration(freshness: 300, resign: 120).legacyClientWarnings.isEmpty)
    }

    @Test func aFreshnessWindowAboveTheLegacyOneIsReported() {
        let warnings = configuration(freshness: 601).legacyClientWarnings
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("'freshnessWindowSeconds' is 601") == true)
    }

    @Test(arguments: [(300.5, "only 299 s left"), (599, "only 1 s left"), (600, "age past the 600 s"), (3600, "age past the 600 s")])
    func reSignIntervalsThatLeaveLegacyClientsTooLittleAreReported(interval: Double, expected: String) {
        let warnings = configuration(freshness: 7200, resign: interval).legacyClientWarnings.filter { $0.contains("resignIntervalSeconds") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains(expected) == true, "\(warnings)")
    }
}
