import Foundation
import PinsetCore
import PinsetHTTP
import PinsetPublishing
import PinsetServer
import PinsetTestSupport
import Testing

struct PinsetRequestHandlerTests {
    static let signedAt: Int64 = 1_800_000_000

    static func handler(now: Int64, ready: Bool = true, endpoints: PinsetRequestHandler.Endpoints = .all) throws -> PinsetRequestHandler {
        let cache = BundleCache()
        cache.replace(with: [SignedBundle(customer: try CustomerName("acme"), bytes: [1, 2, 3], version: 4, timestamp: signedAt, expires: signedAt + 3600)], signedAt: signedAt)
        return PinsetRequestHandler(
            cache: cache,
            readiness: { ready ? .ready : .notReady("signing failed: cannot read /srv/pinset/signing-key.pem") },
            statusReport: { Array("{}".utf8) },
            metrics: nil,
            now: { Date(timeIntervalSince1970: TimeInterval(now)) },
            endpoints: endpoints
        )
    }

    static func get(_ target: String, headers: [(String, String)] = []) -> HTTPRequestHead {
        HTTPRequestHead(method: .get, target: target, version: .http1_1, headers: [("Host", "x")] + headers)
    }

    func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    @Test func servesABundleWithValidators() throws {
        let response = try Self.handler(now: Self.signedAt + 10).handle(Self.get("/acme.json.signed"))
        #expect(response.status == .ok)
        #expect(response.body == [1, 2, 3])
        #expect(header(response, "Content-Type") == "application/pkcs7-mime")
        #expect(header(response, "ETag")?.hasPrefix("\"") == true)
        // 600 s of freshness, 10 s used, 300 s kept for the client: 290 s may be cached.
        #expect(header(response, "Cache-Control") == "public, max-age=290")
    }

    /// A bundle served from a file (the spool, the persisted bundles) is the same response as one in memory; one
    /// whose file was cut short under the server is a 503 a client or load balancer retries elsewhere, never part
    /// of a bundle.
    @Test func aBundleOnAFileIsServedWholeOrNotAtAll() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let acme = try CustomerName("acme")
        let bytes = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let signed = SignedBundle(customer: acme, bytes: bytes, version: 4, timestamp: Self.signedAt, expires: Self.signedAt + 3600)
        let path = directory.file(BundleArchive.fileName)
        try BundleArchive.write([BundleArchive.Entry(bundle: signed, signer: .deploymentDefault)], to: path)
        let onFile = try #require(try BundleArchive.read(from: path)?.first?.bundle)
        let spooled = try BundleSpool(directory: directory.path).store([signed]).bundles[0]
        for bundle in [onFile, spooled] {
            #expect(bundle.file != nil)
            let cache = BundleCache()
            cache.replace(with: [bundle], signedAt: Self.signedAt)
            let handler = PinsetRequestHandler(cache: cache, readiness: { .ready }, statusReport: { [] }, metrics: nil,
                                               now: { Date(timeIntervalSince1970: TimeInterval(Self.signedAt + 10)) })
            let response = handler.handle(Self.get("/acme.json.signed"))
            #expect(response.status == .ok && response.body == bytes)
            #expect(header(response, "ETag") == signed.etag)
        }

        #expect(truncate(path, 100) == 0)
        let cache = BundleCache()
        cache.replace(with: [onFile], signedAt: Self.signedAt)
        let handler = PinsetRequestHandler(cache: cache, readiness: { .ready }, statusReport: { [] }, metrics: nil,
                                           now: { Date(timeIntervalSince1970: TimeInterval(Self.signedAt + 10)) })
        let response = handler.handle(Self.get("/acme.json.signed"))
        #expect(response.status == .serviceUnavailable)
        #expect(header(response, "Retry-After") == "5" && header(response, "Content-Type")?.hasPrefix("text/plain") == true)
        #expect(response.body == Array("the bundle for this customer cannot be read on this server\n".utf8))
        #expect(header(response, "ETag") == nil && header(response, "Content-Type") != "application/pkcs7-mime")
        // A conditional request needs no bytes: the client's copy is still confirmed.
        #expect(handler.handle(Self.get("/acme.json.signed", headers: [("If-None-Match", signed.etag)])).status == .notModified)
    }

    @Test func answersNotModifiedForAMatchingETag() throws {
        let handler = try Self.handler(now: Self.signedAt + 10)
        let etag = try #require(header(handler.handle(Self.get("/acme.json.signed")), "ETag"))
        for condition in [etag, "\"x\", \(etag)", "W/\(etag)", "*"] {
            let response = handler.handle(Self.get("/acme.json.signed", headers: [("If-None-Match", condition)]))
            #expect(response.status == .notModified, "If-None-Match: \(condition)")
        }
        #expect(handler.handle(Self.get("/acme.json.signed", headers: [("If-None-Match", "\"other\"")])).status == .ok)
    }

    @Test func ifModifiedSinceNeverHidesABundleSignedInTheSameSecondAsTheOneItReplaced() throws {
        let cache = BundleCache()
        let acme = try CustomerName("acme")
        let handler = PinsetRequestHandler(cache: cache, readiness: { .ready }, statusReport: { [] }, metrics: nil,
                                           now: { Date(timeIntervalSince1970: TimeInterval(Self.signedAt + 10)) })
        let since = String(decoding: HTTPDate.imfFixdate(unixSeconds: Self.signedAt), as: UTF8.self)
        let conditional = Self.get("/acme.json.signed", headers: [("If-Modified-Since", since)])
        cache.replace(with: [SignedBundle(customer: acme, bytes: [1], version: 1, timestamp: Self.signedAt, expires: Self.signedAt + 3600)], signedAt: Self.signedAt)
        #expect(handler.handle(conditional).status == .notModified)
        // An edit re-signed within the same second: a client holding the first bundle must get the second.
        cache.replace(with: [SignedBundle(customer: acme, bytes: [2], version: 2, timestamp: Self.signedAt, expires: Self.signedAt + 3600)], signedAt: Self.signedAt)
        #expect(handler.handle(conditional).status == .ok)
        // Reused unchanged, it stays ambiguous; the next second's bundle is a validator again.
        cache.replace(with: [try #require(cache.bundle(for: acme))], signedAt: Self.signedAt)
        #expect(handler.handle(conditional).status == .ok)
        cache.replace(with: [SignedBundle(customer: acme, bytes: [3], version: 3, timestamp: Self.signedAt + 1, expires: Self.signedAt + 3600)], signedAt: Self.signedAt + 1)
        #expect(handler.handle(conditional).status == .ok)
        let later = String(decoding: HTTPDate.imfFixdate(unixSeconds: Self.signedAt + 1), as: UTF8.self)
        #expect(handler.handle(Self.get("/acme.json.signed", headers: [("If-Modified-Since", later)])).status == .notModified)
    }

    /// RFC 9110 §13.1.2 lists, weak tags, whitespace and empty list elements, read from the field's bytes; a value
    /// outside ASCII is compared as before, Unicode whitespace included.
    @Test func notModifiedForEverySpellingOfAMatchingList() throws {
        let handler = try Self.handler(now: Self.signedAt + 10)
        let etag = try #require(header(handler.handle(Self.get("/acme.json.signed")), "ETag"))
        let matching = [
            "\t\(etag) ", "\"a\",,\(etag)", "\"a\" ,\tW/\(etag) , \"b\"", " * ", "\(etag),", ", \(etag)", "\u{00A0}\(etag)",
        ]
        for condition in matching {
            let response = handler.handle(Self.get("/acme.json.signed", headers: [("If-None-Match", condition)]))
            #expect(response.status == .notModified, "If-None-Match: \(condition)")
        }
        let different = ["", ",", " , ", "\"a\", \"b\"", "W/", "\(etag)x", "**", "W/W/\(etag)", "\u{00A0}\"a\"", "* , \"a\""]
        for condition in different {
            let response = handler.handle(Self.get("/acme.json.signed", headers: [("If-None-Match", condition)]))
            #expect(response.status == .ok, "If-None-Match: \(condition)")
        }
    }

    /// RFC 9110 §5.3: repeated field lines are one comma-separated list, so a tag on any line matches.
    @Test func everyIfNoneMatchLineIsPartOfTheList() throws {
        let handler = try Self.handler(now: Self.signedAt + 10)
        let etag = try #require(header(handler.handle(Self.get("/acme.json.signed")), "ETag"))
        let matching: [[String]] = [["\"a\"", etag], ["\"a\"", "\"b\", W/\(etag)"], [etag, "\"a\""], ["\"a\"", "", etag]]
        for lines in matching {
            let request = Self.get("/acme.json.signed", headers: lines.map { ("If-None-Match", $0) })
            #expect(handler.handle(request).status == .notModified, "If-None-Match lines: \(lines)")
        }
        for lines in [["\"a\"", "\"b\""], ["\"a\"", ""], ["", "\(etag)x"]] {
            let request = Self.get("/acme.json.signed", headers: lines.map { ("If-None-Match", $0) })
            #expect(handler.handle(request).status == .ok, "If-None-Match lines: \(lines)")
        }
        // A non-matching list on any line still outranks If-Modified-Since (RFC 9110 §13.2.2).
        let since = String(decoding: HTTPDate.imfFixdate(unixSeconds: Self.signedAt), as: UTF8.self)
        let stale = Self.get("/acme.json.signed", headers: [("If-None-Match", "\"a\""), ("If-None-Match", "\"b\""), ("If-Modified-Since", since)])
        #expect(handler.handle(stale).status == .ok)
    }

    @Test func notModifiedCarriesValidatorsButNoRepresentation() throws {
        let handler = try Self.handler(now: Self.signedAt + 10)
        let full = handler.handle(Self.get("/acme.json.signed"))
        let etag = try #require(header(full, "ETag"))
        let response = handler.handle(Self.get("/acme.json.signed", headers: [("If-None-Match", etag)]))
        #expect(response.status == .notModified)
        #expect(response.body.isEmpty)
        #expect(response.headers.map(\.0) == ["ETag", "Cache-Control", "Last-Modified"])
        #expect(header(response, "Cache-Control") == header(full, "Cache-Control"))
        #expect(header(response, "Last-Modified") == header(full, "Last-Modified"))
    }

    @Test func neverServesABundleClientsWouldRefuseAsFresh() throws {
        let late = try Self.handler(now: Self.signedAt + 590).handle(Self.get("/acme.json.signed"))
        #expect(late.status == .ok)
        #expect(header(late, "Cache-Control") == "public, max-age=0")
        let stale = try Self.handler(now: Self.signedAt + 601).handle(Self.get("/acme.json.signed"))
        #expect(stale.status == .serviceUnavailable)
        #expect(stale.body != [1, 2, 3])
    }

    @Test func unknownPathsAndCustomers() throws {
        let handler = try Self.handler(now: Self.signedAt)
        for target in ["/globex.json.signed", "/acme.json", "/ACME.json.signed", "/", "/acme.json.signed/x", "/../acme.json.signed"] {
            #expect(handler.handle(Self.get(target)).status == .notFound, "\(target)")
        }
        #expect(handler.handle(Self.get("/acme.json.signed?x=1")).status == .ok)
    }

    @Test func healthAndReadiness() throws {
        #expect(try Self.handler(now: Self.signedAt).handle(Self.get("/healthz")).status == .ok)
        #expect(try Self.handler(now: Self.signedAt).handle(Self.get("/readyz")).status == .ok)
        let notReady = try Self.handler(now: Self.signedAt, ready: false).handle(Self.get("/readyz"))
        #expect(notReady.status == .serviceUnavailable)
        #expect(String(decoding: notReady.body, as: UTF8.self).contains("signing failed"))
    }

    /// With an admin listener, the public port keeps its reasons as it keeps /status: a load balancer reads the status
    /// code, and the reason names the server's files.
    @Test func thePublicListenersReadinessSaysNoWhy() throws {
        let notReady = try Self.handler(now: Self.signedAt, ready: false, endpoints: .publicOnly).handle(Self.get("/readyz"))
        #expect(notReady.status == .serviceUnavailable && String(decoding: notReady.body, as: UTF8.self) == "not ready\n")
        let onTheAdminListener = try Self.handler(now: Self.signedAt, ready: false, endpoints: .adminOnly).handle(Self.get("/readyz"))
        #expect(String(decoding: onTheAdminListener.body, as: UTF8.self).contains("/srv/pinset/signing-key.pem"))
        #expect(try Self.handler(now: Self.signedAt, endpoints: .publicOnly).handle(Self.get("/readyz")).status == .ok)
    }
}
