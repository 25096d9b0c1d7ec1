import Foundation
import PinsetCore
import PinsetHTTP
import PinsetLogPublishing
import PinsetPublishing
import PinsetTransparency

/// Routes requests: `/<customer>.json.signed`, `/healthz`, `/readyz`, `/status`, `/metrics`, limited by
/// ``endpoints`` so that a public listener can leave the operator endpoints to a private one (404 there).
///
/// Called on connection queues for every request, so it does no I/O and no signing: a cache lookup and a few
/// header comparisons. A customer name is validated by `CustomerName(bundlePath:)` and only ever used as a
/// dictionary key; it never reaches the filesystem.
public struct PinsetRequestHandler: HTTPRequestHandler {
    public let cache: BundleCache
    public let readiness: @Sendable () -> Readiness
    /// JSON for `/status` (what `pinset status` prints).
    public let statusReport: @Sendable () -> [UInt8]
    public let metrics: ServerMetrics?
    /// Counts bundle fetches by the version clients hold; nil counts nothing.
    public let uptake: UptakeCounter?
    /// How long after signing clients accept a bundle (legacy clients: `timestamp + 600 >= now`).
    public let freshnessWindow: Int64
    /// How much freshness a cached copy must keep for the client that finally receives it.
    public let minimumRemainingFreshness: Int64
    public let now: @Sendable () -> Date
    public let endpoints: Endpoints
    /// The transparency log served on the public endpoints (`/log/…` and `/<customer>.json.proof`); nil: none.
    public let transparencyLog: TransparencyLogPublisher?
    /// `Cache-Control` values for every `max-age` the freshness settings allow (up to a bound), made once so that
    /// a bundle response formats no string.
    private let cacheControlValues: [String]

    /// Which endpoints a listener serves; the others answer 404.
    public enum Endpoints: Sendable {
        /// Everything: the single listener when no admin listener is configured.
        case all
        /// Bundles, `/healthz` and `/readyz`: the public listener beside an admin listener.
        case publicOnly
        /// `/status`, `/metrics`, `/healthz` and `/readyz`: the admin listener.
        case adminOnly
    }

    /// How much of the freshness window a bundle must have left when a cache hands it out.
    public static let defaultMinimumRemainingFreshness: Int64 = 300

    /// The longest `Cache-Control: max-age` a bundle response carries with this freshness window.
    public static func longestMaxAge(freshnessWindow: Int64, minimumRemainingFreshness: Int64 = defaultMinimumRemainingFreshness) -> Int64 {
        max(0, freshnessWindow - minimumRemainingFreshness)
    }

    public init(
        cache: BundleCache,
        readiness: @escaping @Sendable () -> Readiness,
        statusReport: @escaping @Sendable () -> [UInt8],
        metrics: ServerMetrics?,
        uptake: UptakeCounter? = nil,
        freshnessWindow: Int64 = 600,
        minimumRemainingFreshness: Int64 = defaultMinimumRemainingFreshness,
        now: @escaping @Sendable () -> Date = Date.init,
        endpoints: Endpoints = .all,
        transparencyLog: TransparencyLogPublisher? = nil
    ) {
        self.endpoints = endpoints
        self.transparencyLog = transparencyLog
        self.cache = cache
        self.readiness = readiness
        self.statusReport = statusReport
        self.metrics = metrics
        self.uptake = uptake
        self.freshnessWindow = freshnessWindow
        self.minimumRemainingFreshness = minimumRemainingFreshness
        self.now = now
        let longest = min(Self.longestMaxAge(freshnessWindow: freshnessWindow, minimumRemainingFreshness: minimumRemainingFreshness), Self.precomputedMaxAges)
        self.cacheControlValues = (0...longest).map { "public, max-age=\($0)" }
    }

    public func handle(_ request: HTTPRequestHead) -> HTTPResponse {
        let path = request.path
        if endpoints != .adminOnly, let customer = CustomerName(bundlePath: path) {
            return bundleResponse(customer: customer, request: request)
        }
        if endpoints != .adminOnly, let transparencyLog, let response = logResponse(path: path, query: request.query, log: transparencyLog) {
            return response
        }
        if endpoints == .publicOnly && (path == "/status" || path == "/metrics") {
            return .text(.notFound, "not found\n")
        }
        switch path {
        case "/healthz":
            return .text(.ok, "ok\n")
        case "/readyz":
            let state = readiness()
            // Where /status is the admin listener's, so is the reason: it names key files, the database and
            // customers, and a load balancer needs only the status code.
            if endpoints == .publicOnly { return state.isReady ? .text(.ok, "ready\n") : .text(.serviceUnavailable, "not ready\n") }
            if state.isReady {
                // A note (the store is unavailable, say) keeps the status: the bundles served are still fresh.
                return .text(.ok, state.reason.isEmpty ? "ready\n" : "ready; \(state.reason)\n")
            }
            return .text(.serviceUnavailable, "not ready: \(state.reason)\n")
        case "/status":
            return HTTPResponse(status: .ok, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: statusReport())
        case "/metrics":
            guard let metrics else { return .text(.notFound, "not found\n") }
            if let uptake { metrics.uptake.record(uptake.summary(latest: cache.snapshot.latestVersions, at: now())) }
            let body = metrics.render(oldestBundleTimestamp: cache.snapshot.oldestTimestamp, now: now())
            return HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")], body: body)
        default:
            return .text(.notFound, "not found\n")
        }
    }

    private func bundleResponse(customer: CustomerName, request: HTTPRequestHead) -> HTTPResponse {
        guard let bundle = cache.bundle(for: customer) else {
            // A known customer whose identity cannot sign: unavailable, not absent. The reason (file paths)
            // stays in /status and the log.
            if cache.failure(for: customer) != nil { return Self.notSignedInTime }
            return .text(.notFound, "not found\n")
        }
        let time = now()
        let nowSeconds = Int64(time.timeIntervalSince1970)
        let freshUntil = bundle.timestamp + freshnessWindow
        // Clients would refuse it anyway; saying so lets a load balancer or client try elsewhere.
        guard nowSeconds <= freshUntil else { return Self.notSignedInTime }
        // Counted whether the answer is 200 or 304: a conditional fetch is a fetch.
        uptake?.record(UptakeCounter.reported(in: request), customer: customer, servedVersion: bundle.version, at: time)
        let maxAge = max(0, freshUntil - nowSeconds - minimumRemainingFreshness)
        let cacheControl = maxAge < cacheControlValues.count ? cacheControlValues[Int(maxAge)] : "public, max-age=\(maxAge)"
        if Self.isNotModified(request, bundle: bundle) {
            // RFC 9110 §15.4.5: the fields a 200 would carry that describe the representation's caching; no
            // Content-Type and no length, as nginx sends it.
            return HTTPResponse(status: .notModified, headers: [
                ("ETag", bundle.etag), ("Cache-Control", cacheControl), ("Last-Modified", bundle.lastModified),
            ])
        }
        // On a file (see `BundleFile`) that can no longer be read: a disk fault. Unavailable, so that a load
        // balancer or the client tries another server; never a partial body.
        guard let bytes = try? bundle.bytes else {
            metrics?.recordUnreadableBundle()
            return Self.unreadable
        }
        return HTTPResponse(status: .ok, headers: [
            ("Content-Type", "application/pkcs7-mime"), ("ETag", bundle.etag), ("Cache-Control", cacheControl),
            ("Last-Modified", bundle.lastModified),
        ], body: bytes)
    }

    /// `/log/checkpoint`, `/log/tile/…` and `/<customer>.json.proof[?version=N]`; nil for any other path.
    ///
    /// A proof is of the content version the query names, else of the bundle served now: a client that downloaded
    /// the bundle just before a pass replaced it asks for the proof of the one it has.
    private func logResponse(path: Substring, query: Substring?, log: TransparencyLogPublisher) -> HTTPResponse? {
        if let customer = CustomerName(proofPath: path) {
            guard let bundle = cache.bundle(for: customer) else { return .text(.notFound, "not found\n") }
            var version = bundle.version
            if let query {
                guard query.hasPrefix("version="), let asked = Int64(query.dropFirst("version=".count)), asked >= 0,
                      String(asked) == query.dropFirst("version=".count)
                else { return .text(.badRequest, "the only query a proof takes is version=<content version>\n") }
                version = asked
            }
            do {
                guard let proof = try log.proof(for: customer, version: version) else {
                    return version == bundle.version ? Self.noProofYet : .text(.notFound, "no content version \(version) of this customer is under the served checkpoint\n")
                }
                return HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-cache")], body: proof)
            } catch {
                return Self.noProofYet
            }
        }
        guard path.hasPrefix(Self.logPrefix) else { return nil }
        let below = path.dropFirst(Self.logPrefix.count)
        if below == "checkpoint" {
            guard let checkpoint = log.checkpoint else { return Self.noProofYet }
            return HTTPResponse(status: .ok, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-cache")], body: checkpoint.encoded)
        }
        // Only the canonical spelling of a tile path parses, so one tile has one URL and no path is normalised.
        guard below.hasPrefix("tile/"), let address = try? TileAddress(path: String(below)),
              let contents = try? log.tile(address)
        else { return .text(.notFound, "not found\n") }
        // A tile's contents never change once it exists; a wider partial tile has a path of its own.
        return HTTPResponse(status: .ok, headers: [
            ("Content-Type", "application/octet-stream"), ("Cache-Control", "public, max-age=31536000, immutable"),
        ], body: contents)
    }

    static let logPrefix = "/log/"

    static let noProofYet = HTTPResponse(
        status: .serviceUnavailable,
        headers: [("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "1"), ("Cache-Control", "no-store")],
        body: Array("no checkpoint of the transparency log covers this content yet\n".utf8)
    )

    /// The preconditions of RFC 9110 §13.2.2 that can answer 304: If-None-Match when present (step 3), and only
    /// without it If-Modified-Since (step 4), for GET and HEAD, when the bundle was signed no later than the date
    /// given (§13.1.3). An invalid or repeated date is ignored, as is the date of a bundle that shares its signing
    /// second with another one (``SignedBundle/lastModifiedIsValidator``). Several If-None-Match field lines are
    /// one comma-separated list (RFC 9110 §5.3), so the bundle is not modified when any line matches. The lines
    /// are read in place: most origin traffic behind a CDN is revalidation, and a 304 must not cost more than the
    /// 200 it saves.
    static func isNotModified(_ request: HTTPRequestHead, bundle: SignedBundle) -> Bool {
        var present = false
        var result = false
        request.forEachValue(ofHeader: "If-None-Match") { condition in
            present = true
            result = matches(condition, etag: bundle.etag)
            return !result
        }
        if present { return result }
        guard request.method == .get || request.method == .head, bundle.lastModifiedIsValidator,
              let since = request.dateHeader("If-Modified-Since")
        else { return false }
        return bundle.timestamp <= since
    }

    /// The comparison below, over the field's bytes and without making strings. A value with a byte outside ASCII
    /// goes to the `String` comparison, whose notion of whitespace and equality is Unicode's.
    static func matches(_ condition: UnsafeBufferPointer<UInt8>, etag: String) -> Bool {
        for byte in condition where byte >= 0x80 {
            return matches(String(decoding: condition, as: UTF8.self), etag: etag)
        }
        var etag = etag
        return etag.withUTF8 { tag in
            var tagStart = 0
            if hasWeakPrefix(tag, from: 0, to: tag.count) { tagStart = 2 }
            let (first, end) = trimmed(condition, from: 0, to: condition.count)
            if end - first == 1 && condition[first] == UInt8(ascii: "*") { return true }
            var start = first
            while start < end {
                var comma = start
                while comma < end && condition[comma] != UInt8(ascii: ",") { comma += 1 }
                // `split` leaves out empty elements; one made of whitespace is compared (and never matches).
                if comma > start {
                    var (low, high) = trimmed(condition, from: start, to: comma)
                    if hasWeakPrefix(condition, from: low, to: high) { low += 2 }
                    if equal(condition, from: low, to: high, tag, from: tagStart) { return true }
                }
                start = comma + 1
            }
            return false
        }
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> (Int, Int) {
        var low = start, high = end
        while low < high && isWhitespace(bytes[low]) { low += 1 }
        while high > low && isWhitespace(bytes[high - 1]) { high -= 1 }
        return (low, high)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func hasWeakPrefix(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Bool {
        end - start >= 2 && bytes[start] == UInt8(ascii: "W") && bytes[start + 1] == UInt8(ascii: "/")
    }

    private static func equal(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, _ tag: UnsafeBufferPointer<UInt8>, from tagStart: Int
    ) -> Bool {
        guard end - start == tag.count - tagStart else { return false }
        var index = 0
        while start + index < end {
            if bytes[start + index] != tag[tagStart + index] { return false }
            index += 1
        }
        return true
    }

    /// Enough for the default settings (300 s) and for windows of a few hours; longer ones format the value.
    static let precomputedMaxAges: Int64 = 4096

    static let notSignedInTime = HTTPResponse(
        status: .serviceUnavailable,
        headers: [("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "5"), ("Cache-Control", "no-store")],
        body: Array("the bundle for this customer could not be re-signed in time\n".utf8)
    )

    static let unreadable = HTTPResponse(
        status: .serviceUnavailable,
        headers: [("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "5"), ("Cache-Control", "no-store")],
        body: Array("the bundle for this customer cannot be read on this server\n".utf8)
    )

    /// RFC 9110 §13.1.2: `*` or a list of entity tags, compared weakly.
    static func matches(_ condition: String, etag: String) -> Bool {
        let trimmed = condition.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return true }
        let weak = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in trimmed.split(separator: ",") {
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == weak { return true }
        }
        return false
    }
}

/// Whether the server should receive traffic, and if not, why.
public struct Readiness: Sendable {
    public let isReady: Bool
    public let reason: String

    public static let ready = Readiness(isReady: true, reason: "")
    public static func notReady(_ reason: String) -> Readiness { Readiness(isReady: false, reason: reason) }
    /// Ready, with something an operator should know (the store is unavailable, say).
    public static func ready(note: String) -> Readiness { Readiness(isReady: true, reason: note) }
}

extension HTTPResponse {
    static func text(_ status: HTTPStatus, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")], body: Array(text.utf8))
    }
}
