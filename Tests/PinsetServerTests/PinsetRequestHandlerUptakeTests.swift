import Foundation
import PinsetCore
import PinsetHTTP
import PinsetPublishing
import PinsetServer
import Testing

/// What the bundle route counts for uptake, and what `/metrics` makes of it.
struct PinsetRequestHandlerUptakeTests {
    static let signedAt = PinsetRequestHandlerTests.signedAt

    static func handler(uptake: UptakeCounter, metrics: ServerMetrics? = nil, now: Int64 = signedAt + 10, version: Int64 = 4) throws -> PinsetRequestHandler {
        let cache = BundleCache()
        cache.replace(with: [SignedBundle(customer: try CustomerName("acme"), bytes: [1, 2, 3], version: version, timestamp: signedAt, expires: signedAt + 3600)], signedAt: signedAt)
        return PinsetRequestHandler(
            cache: cache,
            readiness: { .ready },
            statusReport: { Array("{}".utf8) },
            metrics: metrics,
            uptake: uptake,
            now: { Date(timeIntervalSince1970: TimeInterval(now)) }
        )
    }

    func summary(_ uptake: UptakeCounter, latest: Int64 = 4) throws -> UptakeSummary? {
        let acme = try CustomerName("acme")
        return uptake.summary(latest: [acme: latest], at: Date(timeIntervalSince1970: TimeInterval(Self.signedAt + 10)))[acme]
    }

    @Test func countsFullAndConditionalFetchesByReportedVersion() throws {
        let uptake = UptakeCounter()
        let handler = try Self.handler(uptake: uptake)
        let full = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", "3")]))
        #expect(full.status == .ok)
        let etag = try #require(full.headers.first { $0.0 == "ETag" }?.1)
        let conditional = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("If-None-Match", etag), ("Pinset-Version", "4")]))
        #expect(conditional.status == .notModified)
        let counted = try #require(try summary(uptake))
        #expect(counted.versions == [3: 1, 4: 1])
        #expect(counted.shareOnLatest == 0.5)
        #expect(counted.oldestVersion == 3)
    }

    @Test func inventedVersionsCannotPushTheServedVersionIntoOther() throws {
        let uptake = UptakeCounter()
        let handler = try Self.handler(uptake: uptake, version: 1000)
        // One client fills the minute's distinct versions before any real client fetches.
        for version in 100..<(100 + UptakeCounter.maximumVersionsPerBucket + 5) {
            _ = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", String(version))]))
        }
        for _ in 0..<3 { _ = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", "1000")])) }
        let counted = try #require(try summary(uptake, latest: 1000))
        #expect(counted.onLatest == 3)
        #expect(counted.versions[1000] == 3)
        #expect(counted.otherVersions == 5)
        #expect(counted.versions.count == UptakeCounter.maximumVersionsPerBucket + 1)
    }

    @Test func aVersionAboveTheOneServedWasNeverServedAndCountsAsUnknown() throws {
        let uptake = UptakeCounter()
        let handler = try Self.handler(uptake: uptake)
        for version in ["5", "999999999999"] {
            #expect(handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", version)])).status == .ok)
        }
        _ = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", "4")]))
        let counted = try #require(try summary(uptake))
        #expect(counted.unknown == 2)
        #expect(counted.versions == [4: 1])
        #expect(counted.shareOnLatest == 1)
    }

    @Test func aMalformedVersionIsUnknownAndTheBundleIsStillServed() throws {
        let uptake = UptakeCounter()
        let handler = try Self.handler(uptake: uptake)
        for value in ["4; drop table", "-4", String(repeating: "7", count: 200)] {
            let response = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", value)]))
            #expect(response.status == .ok)
            #expect(response.body == [1, 2, 3])
        }
        #expect(handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed")).status == .ok)
        let counted = try #require(try summary(uptake))
        #expect(counted.unknown == 4)
        #expect(counted.versions.isEmpty)
    }

    @Test func countsOnlyBundlesActuallyServed() throws {
        let uptake = UptakeCounter()
        let headers = [("Pinset-Version", "4")]
        let handler = try Self.handler(uptake: uptake)
        #expect(handler.handle(PinsetRequestHandlerTests.get("/globex.json.signed", headers: headers)).status == .notFound)
        #expect(handler.handle(PinsetRequestHandlerTests.get("/status", headers: headers)).status == .ok)
        // A bundle too old to serve is not a fetch the client could act on.
        let stale = try Self.handler(uptake: uptake, now: Self.signedAt + 601)
        #expect(stale.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: headers)).status == .serviceUnavailable)
        #expect(uptake.summary(latest: [:], at: Date(timeIntervalSince1970: TimeInterval(Self.signedAt + 10))).isEmpty)
    }

    @Test func metricsCarryOneSeriesPerCustomerWhateverTheVersions() throws {
        let uptake = UptakeCounter()
        let handler = try Self.handler(uptake: uptake, metrics: ServerMetrics(), version: 40)
        for version in 1...40 {
            _ = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", String(version))]))
        }
        _ = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed", headers: [("Pinset-Version", "4")]))
        _ = handler.handle(PinsetRequestHandlerTests.get("/acme.json.signed"))
        let text = String(decoding: handler.handle(PinsetRequestHandlerTests.get("/metrics")).body, as: UTF8.self)
        let uptakeLines = text.split(separator: "\n").filter { $0.hasPrefix("pinset_uptake_") }
        #expect(uptakeLines.sorted() == [
            #"pinset_uptake_fetches{customer="acme"} 42.0"#,
            #"pinset_uptake_oldest_version{customer="acme"} 1.0"#,
            // 1 of the 41 that reported a version holds version 40, the one served.
            "pinset_uptake_share_on_latest{customer=\"acme\"} \(1.0 / 41.0)",
            #"pinset_uptake_unknown_version_fetches{customer="acme"} 1.0"#,
        ])
    }
}
