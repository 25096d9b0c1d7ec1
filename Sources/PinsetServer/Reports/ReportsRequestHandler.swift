import Foundation
import PinsetCore
import PinsetHTTP
import PinsetStore

/// Answers the reports listener: `POST /report/<customer>` with a pin-failure report (``PinFailureReport``).
///
/// Checks run cheapest first, and a refused report changes nothing: the route and method, the client address's
/// rate (429), the media type (415), the customer (404, only customers this server serves), then the report
/// itself, parsed strictly (400). The protocol layer has already refused a body over the configured size (413)
/// and malformed framing (400), and decoded chunked uploads. An accepted report is reduced to its ``PinFailureCount/Key`` (the hour is the
/// server's, not the app's clock), counted once per installation and hour, and handed to the ``ReportWriter``;
/// the database is never touched here, so reports cannot slow bundle serving down. The answer is
/// `202 Accepted` whether or not the report was a duplicate, so a client learns nothing from it.
public struct ReportsRequestHandler: HTTPRequestHandler {
    public let isServed: @Sendable (CustomerName) -> Bool
    public let limiter: ReportRateLimiter
    public let deduplicator: ReportDeduplicator
    public let writer: ReportWriter
    public let recent: RecentReportCounter
    public let metrics: ReportMetrics?
    public let now: @Sendable () -> Int64

    public init(isServed: @escaping @Sendable (CustomerName) -> Bool, limiter: ReportRateLimiter, deduplicator: ReportDeduplicator,
                writer: ReportWriter, recent: RecentReportCounter, metrics: ReportMetrics?,
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.isServed = isServed
        self.limiter = limiter
        self.deduplicator = deduplicator
        self.writer = writer
        self.recent = recent
        self.metrics = metrics
        self.now = now
    }

    static let pathPrefix = "/report/"

    public func handle(_ request: HTTPRequestHead) -> HTTPResponse {
        handle(request, from: "")
    }

    public func handle(_ request: HTTPRequestHead, from address: String) -> HTTPResponse {
        let (outcome, response) = answer(request, from: address)
        metrics?.record(outcome)
        return response
    }

    private func answer(_ request: HTTPRequestHead, from address: String) -> (ReportOutcome, HTTPResponse) {
        let path = request.path
        guard path.hasPrefix(Self.pathPrefix), let customer = try? CustomerName(String(path.dropFirst(Self.pathPrefix.count))) else {
            return (.notAReport, .text(.notFound, "not found; reports are sent to POST /report/<customer>\n"))
        }
        guard request.method == .post else {
            return (.notAReport, HTTPResponse(status: .methodNotAllowed, headers: [("Allow", "POST"), ("Content-Type", "text/plain; charset=utf-8")],
                                              body: Array("reports are sent with POST\n".utf8)))
        }
        let time = now()
        guard limiter.admit(address, at: time) else {
            return (.rateLimited, HTTPResponse(status: .tooManyRequests, headers: [("Retry-After", "60"), ("Content-Type", "text/plain; charset=utf-8")],
                                               body: Array("too many reports from this address; retry in a minute\n".utf8)))
        }
        guard Self.isJSON(request.header("Content-Type")) else {
            return (.unsupportedMediaType, .text(.unsupportedMediaType, "a report must be sent as Content-Type: application/json\n"))
        }
        guard isServed(customer) else {
            return (.unknownCustomer, .text(.notFound, "this server does not serve customer \(customer)\n"))
        }
        let key: PinFailureCount.Key
        let report: PinFailureReport
        do {
            report = try PinFailureReport.parse(request.body)
            key = PinFailureCount.Key(
                customer: customer, hour: PinFailureCount.hour(containing: time), hostname: report.hostname,
                validationResult: report.validationResult, leafSPKISHA256: try report.leafSPKISHA256()?.base64,
                pinsetVersion: report.pinsetVersion, appVersion: report.appVersion
            )
        } catch {
            return (.invalid, .text(.badRequest, "not a valid pin-failure report: \(error)\n"))
        }
        guard deduplicator.isFirst(key, installation: report.appVendorID) else {
            return (.duplicate, Self.accepted)
        }
        guard writer.enqueue(key) else {
            deduplicator.forget(key, installation: report.appVendorID)
            return (.queueFull, HTTPResponse(status: .serviceUnavailable, headers: [("Retry-After", "5"), ("Content-Type", "text/plain; charset=utf-8")],
                                             body: Array("reports are arriving faster than they can be stored; retry later\n".utf8)))
        }
        recent.record(customer, at: time)
        return (.accepted, Self.accepted)
    }

    static let accepted = HTTPResponse(status: .accepted, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                                       body: Array("accepted\n".utf8))

    /// `application/json`, any case, optionally with parameters (`; charset=utf-8`).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }
}
