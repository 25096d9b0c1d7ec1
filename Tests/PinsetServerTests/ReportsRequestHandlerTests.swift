import Foundation
import Logging
import PinsetCore
import PinsetHTTP
@testable import PinsetServer
import PinsetStore
import PinsetTestSupport
import Testing

/// The reports handler: each refusal has its status and counts nothing; accepted reports are counted once per
/// installation and hour.
struct ReportsRequestHandlerTests {
    static let leaf: TestPKI.Issued = {
        let ca = try! TestPKI.certificateAuthority()
        return try! TestPKI.leaf(commonName: "api.example.com", dnsNames: ["api.example.com"], issuer: ca)
    }()

    let writer = ReportWriter(sink: ReportWriterTests.RecordingSink(), maximumPendingKeys: 100, retentionDays: 30,
                              flushInterval: .seconds(60), logger: Logger(label: "test"), now: { 7300 })
    let recent = RecentReportCounter()

    func handler(perMinute: Int = 100) -> ReportsRequestHandler {
        ReportsRequestHandler(
            isServed: { $0.rawValue == "acme" },
            limiter: ReportRateLimiter(reportsPerMinute: perMinute, maximumAddresses: 10),
            deduplicator: ReportDeduplicator(maximumEntries: 100),
            writer: writer, recent: recent, metrics: nil, now: { 7300 }
        )
    }

    func post(_ body: [UInt8], to path: String = "/report/acme", contentType: String? = "application/json") -> HTTPRequestHead {
        var headers = [("Host", "reports")]
        if let contentType { headers.append(("Content-Type", contentType)) }
        return HTTPRequestHead(method: .post, target: path, headers: headers, body: body)
    }

    var report: [UInt8] { TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM) }

    @Test func aTrustKitReportIsAcceptedAndCountedOncePerInstallation() {
        let handler = handler()
        #expect(handler.handle(post(report), from: "192.0.2.1").status == .accepted)
        #expect(handler.handle(post(report), from: "192.0.2.1").status == .accepted, "a duplicate is answered the same")
        let other = TrustKitReportFixture.json(leafPEM: Self.leaf.certificatePEM, vendorID: "another-installation")
        #expect(handler.handle(post(other, contentType: "Application/JSON; charset=utf-8"), from: "192.0.2.2").status == .accepted)
        #expect(writer.pendingKeys == 1)
        #expect(recent.lastHour(at: 7300) == [try! CustomerName("acme"): 2])
    }

    @Test func refusedRequestsHaveTheirStatusAndCountNothing() {
        let handler = handler()
        let cases: [(HTTPRequestHead, Int)] = [
            (post(report, contentType: "text/plain"), 415),
            (post(report, contentType: nil), 415),
            (post(report, to: "/report/globex"), 404),
            (post(report, to: "/report/../etc"), 404),
            (post(report, to: "/acme.json.signed"), 404),
            (HTTPRequestHead(method: .get, target: "/report/acme"), 405),
            (post(Array("{\"hostname\": 1}".utf8)), 400),
            (post([]), 400),
            (post([0xFF, 0xFE]), 400),
        ]
        for (request, status) in cases {
            #expect(handler.handle(request, from: "192.0.2.1").status.code == status, "\(request.method) \(request.target)")
        }
        #expect(writer.pendingKeys == 0)
        #expect(recent.lastHour(at: 7300).isEmpty)
    }

    @Test func anAddressOverItsQuotaGets429AndOthersAreUnaffected() {
        let handler = handler(perMinute: 2)
        let statuses = (0..<4).map { _ in handler.handle(post(report), from: "192.0.2.1").status.code }
        #expect(statuses == [202, 202, 429, 429])
        #expect(handler.handle(post(report), from: "192.0.2.2").status.code == 202)
    }
}
