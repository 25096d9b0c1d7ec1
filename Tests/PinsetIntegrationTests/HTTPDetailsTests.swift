import Foundation
import PinsetTestSupport
import Testing

/// HTTP behaviour of a real `pinset serve` that common clients rely on: conditional requests by date (`curl -z`,
/// `wget -N`, caches), percent-encoded paths as nginx serves them, and `pinset status` aimed at the wrong port.
@Suite(.serialized) struct HTTPDetailsTests {
    static func acmeServer(_ extra: [String: Any] = [:]) throws -> (PinsetCLI, RunningServer) {
        let cli = try PinsetCLI.initialized()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--hash", HostileClientTests.pinHash, "--hash", HostileClientTests.backupHash]).status == 0)
        return (cli, try RunningServer(cli: cli, extraConfiguration: extra))
    }

    @Test func ifModifiedSinceIsAnsweredWith304AsNginxDoesAndIfNoneMatchWins() throws {
        let (cli, server) = try Self.acmeServer()
        defer { server.stop(); cli.remove() }
        let url = "\(server.baseURL)/acme.json.signed"
        let first = try CurlResponse.get(url, in: cli.directory)
        #expect(first.status == 200)
        let lastModified = try #require(first.headers["last-modified"])
        let etag = try #require(first.headers["etag"])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let signed = try #require(formatter.date(from: lastModified))
        func date(_ offset: TimeInterval) -> String { formatter.string(from: signed.addingTimeInterval(offset)) }

        // curl -z sends If-Modified-Since; the same date or a later one is not modified (RFC 9110 §13.1.3).
        let same = try CurlResponse.get(url, ["-z", lastModified], in: cli.directory)
        #expect(same.status == 304)
        #expect(same.body.isEmpty)
        #expect(same.headers["etag"] == etag && same.headers["last-modified"] == lastModified)
        #expect(try CurlResponse.get(url, ["-H", "If-Modified-Since: \(date(60))"], in: cli.directory).status == 304)
        #expect(try CurlResponse.get(url, ["-I", "-H", "If-Modified-Since: \(lastModified)"], in: cli.directory).status == 304)
        // The obsolete date forms a recipient must accept (RFC 9110 §5.6.7).
        formatter.dateFormat = "EEEE, dd-MMM-yy HH:mm:ss 'GMT'"
        #expect(try CurlResponse.get(url, ["-H", "If-Modified-Since: \(date(0))"], in: cli.directory).status == 304)
        formatter.dateFormat = "EEE MMM"
        let weekdayMonth = formatter.string(from: signed)
        formatter.dateFormat = "HH:mm:ss yyyy"
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(secondsFromGMT: 0)!
        let day = utc.component(.day, from: signed)
        let asctime = "\(weekdayMonth) \(day < 10 ? " " : "")\(day) \(formatter.string(from: signed))"
        #expect(asctime.count == 24)
        #expect(try CurlResponse.get(url, ["-H", "If-Modified-Since: \(asctime)"], in: cli.directory).status == 304)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"

        // An earlier date, an invalid one, or two of them: the full bundle.
        #expect(try CurlResponse.get(url, ["-H", "If-Modified-Since: \(date(-1))"], in: cli.directory).status == 200)
        for invalid in ["yesterday", "\(lastModified) trailing", "Mon, 31 Feb 2026 00:00:00 GMT", lastModified.lowercased()] {
            #expect(try CurlResponse.get(url, ["-H", "If-Modified-Since: \(invalid)"], in: cli.directory).status == 200, "\(invalid)")
        }
        #expect(try CurlResponse.get(url, ["-H", "If-Modified-Since: \(lastModified)", "-H", "If-Modified-Since: \(lastModified)"], in: cli.directory).status == 200)
        // If-None-Match wins when present (RFC 9110 §13.2.2): a stale tag gets the bundle whatever the date says.
        #expect(try CurlResponse.get(url, ["-H", "If-None-Match: \"stale\"", "-z", lastModified], in: cli.directory).status == 200)
        #expect(try CurlResponse.get(url, ["-H", "If-None-Match: \(etag)", "-H", "If-Modified-Since: \(date(-3600))"], in: cli.directory).status == 304)
        // Two If-None-Match lines are one list (RFC 9110 §5.3): the tag on the second line matches.
        #expect(try CurlResponse.get(url, ["-H", "If-None-Match: \"stale\"", "-H", "If-None-Match: \(etag)"], in: cli.directory).status == 304)
        #expect(try CurlResponse.get(url, ["-H", "If-None-Match: \"stale\"", "-H", "If-None-Match: \"older\""], in: cli.directory).status == 200)
    }

    @Test func percentEncodedUnreservedCharactersAreNormalisedButReservedOnesAreNot() throws {
        let (cli, server) = try Self.acmeServer()
        defer { server.stop(); cli.remove() }
        let plain = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
        #expect(plain.status == 200)
        for path in ["/acme%2Ejson.signed", "/%61%63%6D%65.json.signed", "/acm%65.json%2esigned"] {
            let response = try CurlResponse.get("\(server.baseURL)\(path)", ["--path-as-is"], in: cli.directory)
            #expect(response.status == 200, "\(path)")
            #expect(response.headers["etag"] == plain.headers["etag"], "\(path)")
        }
        // Reserved characters stay encoded (RFC 3986 §6.2.2.2): %2F is not a path separator.
        #expect(try CurlResponse.get("\(server.baseURL)/%2Facme.json.signed", ["--path-as-is"], in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/acme%2Ejson%2Fsigned", ["--path-as-is"], in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/healthz%3F", ["--path-as-is"], in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/%68ealthz", ["--path-as-is"], in: cli.directory).status == 200)
    }

    @Test func statusAimedAtThePublicPortNamesTheAdminListener() throws {
        let (cli, server) = try Self.acmeServer(["admin": ["host": "127.0.0.1", "port": 0]])
        defer { server.stop(); cli.remove() }
        let result = try cli.run(["status", "--url", server.baseURL])
        #expect(result.status != 0)
        #expect(result.stderr.contains("/status only there"), "\(result.combined)")
        #expect(result.stderr.contains("admin"), "\(result.combined)")
        #expect(!result.combined.contains("JSON"), "\(result.combined)")
        let json = try cli.run(["status", "--json", "--url", server.baseURL])
        #expect(json.status != 0)
        #expect(json.stderr.contains("/status only there"), "\(json.combined)")
    }
}
