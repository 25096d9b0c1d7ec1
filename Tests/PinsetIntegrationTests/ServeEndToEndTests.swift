#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// The real binary, end to end: CLI edits, `pinset serve`, `curl`, and OpenSSL as the independent verifier
/// that legacy clients embed.
@Suite(.serialized) struct ServeEndToEndTests {
    static let hashPin = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="

    /// A new deployment with customer `acme` and one host with two hash pins: the least a bundle apps accept.
    static func deploymentWithOneCustomer() throws -> PinsetCLI {
        let cli = try PinsetCLI.initialized()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com",
                             "--hash", hashPin, "--hash", "C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M="]).status == 0)
        return cli
    }

    func populated() throws -> PinsetCLI {
        let cli = try PinsetCLI.initialized()
        #expect(try cli.run(["customer", "add", "acme"]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "api.example.com", "--port", "8443"]).status == 0)
        let cert = try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "api")
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "api.example.com", "--certificate", cert.cert, "--hash", Self.hashPin]).status == 0)
        #expect(try cli.run(["host", "add", "acme", "hash-only.example.com", "--include-subdomains"]).status == 0)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "hash-only.example.com", "--hash", Self.hashPin]).status == 0)
        return cli
    }

    @Test func servesBundlesThatOpenSSLVerifies() throws {
        let cli = try populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }

        let response = try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory)
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/pkcs7-mime")
        #expect(response.headers["content-length"] == String(response.body.count))
        #expect(response.headers["etag"]?.hasPrefix("\"") == true)
        #expect(response.headers["date"] != nil)
        let maxAge = response.headers["cache-control"].flatMap { $0.components(separatedBy: "max-age=").last }.flatMap { Int($0) }
        #expect(maxAge != nil && maxAge! <= 600)

        let bundle = try cli.directory.write("acme.json.signed", response.body)
        var verifiedJSON: [UInt8] = []
        for tool in ["smime", "cms"] {
            let verified = try ProcessRunner.run("openssl", [tool, "-verify", "-inform", "der", "-in", bundle, "-CAfile", cli.trustCertificate])
            #expect(verified.status == 0, "openssl \(tool) -verify: \(verified.stderr)")
            verifiedJSON = verified.stdout
        }
        try checkLegacyPayload(verifiedJSON)

        let verify = try cli.run(["verify", bundle, "--trust", cli.trustCertificate, "--customer", "acme"])
        #expect(verify.status == 0, "\(verify.combined)")
        #expect(verify.stdoutText.contains("api.example.com"))
        let wrongCustomer = try cli.run(["verify", bundle, "--trust", cli.trustCertificate, "--customer", "globex"])
        #expect(wrongCustomer.status != 0)
        #expect(wrongCustomer.stderr.contains("wrongCustomer") || wrongCustomer.stderr.contains("customer"), "\(wrongCustomer.stderr)")

        #expect(server.stop() == 0, "SIGTERM must exit 0: \(server.process.stderr)")
    }

    /// SIGTERM while the server is still starting (here: its first write waits on a lock another process holds
    /// on the database) is a request to stop like any other: once started, the server shuts down cleanly and
    /// exits 0, instead of dying by the signal's default action with its in-flight work and logs cut short.
    @Test func aStopSignalDuringStartUpEndsInACleanShutdown() throws {
        let cli = try populated()
        defer { cli.remove() }
        let database = "\(cli.dataDir)/pinset.sqlite"
        let locker = try BackgroundProcess("python3", ["-c", """
            import sqlite3, sys, time
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            time.sleep(60)
            """, database], logDirectory: cli.directory.path, name: "sqlite-lock")
        defer { locker.stop(signal: SIGKILL) }
        #expect(locker.waitFor(timeout: 30) { locker.stdout.contains("locked") }, "\(locker.stderr)")

        let configuration = try cli.directory.write("config.json", #"{"host": "127.0.0.1", "port": 0, "dataDirectory": "\#(cli.dataDir)"}"#)
        let server = try BackgroundProcess(PinsetCLI.binary, ["serve", "--config", configuration], logDirectory: cli.directory.path, name: "serve")
        defer { server.stop(signal: SIGKILL) }
        // A start on this store takes a fraction of a second; this one waits for the lock (up to SQLite's 5 s busy
        // timeout), and is still starting a second in, when the signal comes and the lock goes.
        #expect(!server.waitFor(timeout: 1) { server.stdout.contains("pinset listening") || !server.isRunning },
                "the server must still be starting when the signal comes:\n\(server.stdout)\n\(server.stderr)")
        kill(server.pid, SIGTERM)
        locker.stop(signal: SIGKILL)
        #expect(server.waitFor(timeout: 60) { !server.isRunning })
        #expect(server.stop() == 0, "SIGTERM during start-up must end in a clean exit:\n\(server.stdout)\n\(server.stderr)")
        #expect(server.stdout.contains("Received SIGTERM"), "\(server.stdout)")
        #expect(server.stdout.contains("Stopped"), "\(server.stdout)")
    }

    /// A restart serves the bundles the last pass signed (the same bytes, which OpenSSL still verifies); a damaged
    /// file of persisted bundles is named in the log and not used, and every customer is signed instead.
    @Test func aRestartServesThePersistedBundlesAndIgnoresADamagedFile() throws {
        let cli = try populated()
        defer { cli.remove() }
        let archive = "\(cli.dataDir)/signed-bundles"
        let first = try RunningServer(cli: cli)
        let served = try CurlResponse.get("\(first.baseURL)/acme.json.signed", in: cli.directory)
        #expect(served.status == 200)
        #expect(first.stop() == 0)
        var info = stat()
        #expect(stat(archive, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)

        let second = try RunningServer(cli: cli)
        let again = try CurlResponse.get("\(second.baseURL)/acme.json.signed", in: cli.directory)
        #expect(again.body == served.body, "the persisted bundle is served as it was signed")
        #expect(second.process.stdout.contains("Persisted bundles loaded"), "\(second.process.stdout)")
        #expect(second.process.stdout.contains("kept=1"), "\(second.process.stdout)")
        let bundle = try cli.directory.write("persisted.json.signed", again.body)
        let verified = try ProcessRunner.run("openssl", ["cms", "-verify", "-inform", "der", "-in", bundle, "-CAfile", cli.trustCertificate])
        #expect(verified.status == 0, "openssl cms -verify: \(verified.stderr)")
        #expect(second.stop() == 0)

        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: archive)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: archive))
        let third = try RunningServer(cli: cli)
        defer { third.stop() }
        let resigned = try CurlResponse.get("\(third.baseURL)/acme.json.signed", in: cli.directory)
        #expect(resigned.status == 200)
        #expect(resigned.body != served.body)
        let output = third.process.stdout + third.process.stderr
        #expect(output.contains("cannot be used") && output.contains("checksum"), "\(output)")
        #expect(third.stop() == 0)
    }

    /// The keys and types GCXTrustPolicy clients read; they crash on a missing key or a wrong type.
    func checkLegacyPayload(_ json: [UInt8]) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        #expect(object["customer"] as? String == "acme")
        let timestamp = try #require((object["timestamp"] as? NSNumber)?.int64Value)
        #expect(!(object["timestamp"] is String))
        let now = Int64(Date().timeIntervalSince1970)
        #expect(timestamp <= now && timestamp + 600 >= now, "timestamp \(timestamp) is outside the legacy window at \(now)")
        let hashes = try #require(object["hashes"] as? [[String: Any]])
        #expect(hashes.compactMap { $0["hostname"] as? String }.sorted() == ["api.example.com", "hash-only.example.com"])
        for entry in hashes {
            #expect(entry["port"] is String)
            let fp = try #require(entry["fp"] as? [String])
            let pk = try #require(entry["pk"] as? [String])
            #expect(fp.allSatisfy { $0.count == 64 && $0 == $0.lowercased() && $0.allSatisfy(\.isHexDigit) })
            for key in pk {
                let der = try #require(Data(base64Encoded: key))
                #expect(der.first == 0x30, "pk must be a DER SubjectPublicKeyInfo")
            }
            #expect(entry["pin-sha256"] is [String])
            #expect(entry["include-subdomains"] is Bool)
        }
        let api = try #require(hashes.first { $0["hostname"] as? String == "api.example.com" })
        #expect(api["port"] as? String == "8443")
        #expect((api["fp"] as? [String])?.count == 1)
        #expect((api["pk"] as? [String])?.count == 1)
        #expect((api["pin-sha256"] as? [String])?.count == 2)
        let hashOnly = try #require(hashes.first { $0["hostname"] as? String == "hash-only.example.com" })
        #expect((hashOnly["fp"] as? [String]) == [])
        #expect((hashOnly["pk"] as? [String]) == [])
        #expect(hashOnly["include-subdomains"] as? Bool == true)
        #expect((object["version"] as? NSNumber) != nil)
        #expect(((object["expires"] as? NSNumber)?.int64Value ?? 0) > timestamp)
    }

    @Test func conditionalRequestsAndReSigningAfterAnEdit() throws {
        let cli = try populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        let url = "\(server.baseURL)/acme.json.signed"
        let first = try CurlResponse.get(url, in: cli.directory)
        let etag = try #require(first.headers["etag"])
        let notModified = try CurlResponse.get(url, ["-H", "If-None-Match: \(etag)"], in: cli.directory)
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.headers["etag"] == etag)
        #expect(notModified.headers["content-length"] == nil)
        let otherTag = try CurlResponse.get(url, ["-H", "If-None-Match: \"other\""], in: cli.directory)
        #expect(otherTag.status == 200)

        let head = try CurlResponse.get(url, ["-I"], in: cli.directory)
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == String(first.body.count))

        let versionBefore = try version(of: first.body, cli: cli)
        #expect(try cli.run(["pin", "add", "--skip-live-check", "--reason", "test host not served", "acme", "hash-only.example.com", "--hash", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]).status == 0)
        let editedAt = Date()
        var resigned: CurlResponse?
        while Date().timeIntervalSince(editedAt) < 30 {
            let candidate = try CurlResponse.get(url, in: cli.directory)
            if candidate.headers["etag"] != etag, try version(of: candidate.body, cli: cli) > versionBefore {
                resigned = candidate
                break
            }
            usleep(100_000)
        }
        let updated = try #require(resigned, "the edit was not served within 30 s")
        let again = try CurlResponse.get(url, ["-H", "If-None-Match: \(etag)"], in: cli.directory)
        #expect(again.status == 200, "the old ETag must no longer match")
        #expect(updated.body != first.body)
    }

    func version(of bundle: [UInt8], cli: PinsetCLI) throws -> Int64 {
        let path = try cli.directory.write("v-\(UUID().uuidString.prefix(6)).signed", bundle)
        let out = try ProcessRunner.run("openssl", ["cms", "-verify", "-inform", "der", "-in", path, "-CAfile", cli.trustCertificate])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout)) as? [String: Any])
        return try #require((object["version"] as? NSNumber)?.int64Value)
    }

    @Test func refusesWhatItDoesNotServe() throws {
        let cli = try populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli)
        defer { server.stop() }
        #expect(try CurlResponse.get("\(server.baseURL)/nobody.json.signed", in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/acme.json", in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/..%2Facme.json.signed", in: cli.directory).status == 404)
        #expect(try CurlResponse.get("\(server.baseURL)/../../etc/passwd", ["--path-as-is"], in: cli.directory).status != 200)

        let post = try CurlResponse.get("\(server.baseURL)/acme.json.signed", ["-X", "POST"], in: cli.directory)
        #expect(post.status == 405)
        #expect(post.headers["allow"]?.contains("GET") == true)

        let withBody = try RawClient.exchange(port: server.port, Array("GET /acme.json.signed HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello".utf8))
        #expect(String(decoding: withBody.response, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        let chunked = try RawClient.exchange(port: server.port, Array("GET /acme.json.signed HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8))
        #expect(String(decoding: chunked.response, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        let garbage = try RawClient.exchange(port: server.port, Array("\u{01}\u{02}garbage\r\n\r\n".utf8))
        #expect(String(decoding: garbage.response, as: UTF8.self).hasPrefix("HTTP/1.1 400"))

        let huge = try CurlResponse.get("\(server.baseURL)/acme.json.signed", ["-H", "X-Big: " + String(repeating: "a", count: 16_384)], in: cli.directory)
        #expect(huge.status == 431)

        #expect(try CurlResponse.get("\(server.baseURL)/healthz", in: cli.directory).status == 200)
        #expect(try CurlResponse.get("\(server.baseURL)/readyz", in: cli.directory).status == 200)
        let metrics = try CurlResponse.get("\(server.baseURL)/metrics", in: cli.directory)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("pinset_http_requests_total"))
        #expect(text.contains("pinset_bundles_signed_total"))
        // Access-log lines are written in blocks, at the latest a second after the oldest waiting one.
        let logged = server.process.waitFor(timeout: 30) { server.process.stdout.contains("target=/acme.json.signed") && server.process.stdout.contains("status=405") }
        #expect(logged, "one access-log line per request: \(server.process.stdout.suffix(2000))")
    }

    @Test func cutsOffASlowClientAndExitsCleanly() throws {
        let cli = try populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["requestHeadTimeoutSeconds": 1])
        defer { server.stop() }
        let fd = try RawClient.connect(port: server.port)
        defer { close(fd) }
        let partial = Array("GET /acme.json.signed HTTP/1.1\r\nHost: x\r\n".utf8)
        _ = partial.withUnsafeBytes { SystemCall.send(fd, $0) }
        let started = Date()
        let (_, closed) = RawClient.readUntilClose(fd, timeout: 10)
        #expect(closed, "a client that never finishes its request head must be disconnected")
        #expect(Date().timeIntervalSince(started) < 10)
        // Normal clients are still served.
        #expect(try CurlResponse.get("\(server.baseURL)/acme.json.signed", in: cli.directory).status == 200)
        #expect(server.stop() == 0)
    }

    /// The published JSON Schema, checked by an independent validator against what is really signed.
    @Test func payloadMatchesThePublishedSchema() throws {
        let cli = try populated()
        defer { cli.remove() }
        let out = cli.directory.file("static")
        #expect(try cli.run(["sign", "--out", out]).status == 0)
        let payload = try ProcessRunner.run("openssl", ["cms", "-verify", "-inform", "der", "-in", "\(out)/acme.json.signed", "-CAfile", cli.trustCertificate])
        let payloadPath = try cli.directory.write("payload.json", payload.stdout)
        let validated = try PublishedPayloadSchema.validate(payloadAt: payloadPath)
        #expect(validated.status == 0, "\(validated.stderr)")
    }

    @Test func signOutWritesTheBytesTheServerServes() throws {
        let cli = try populated()
        defer { cli.remove() }
        let out = cli.directory.file("static")
        let signed = try cli.run(["sign", "--out", out])
        #expect(signed.status == 0, "\(signed.combined)")
        let file = "\(out)/acme.json.signed"
        for tool in ["smime", "cms"] {
            let verified = try ProcessRunner.run("openssl", [tool, "-verify", "-inform", "der", "-in", file, "-CAfile", cli.trustCertificate])
            #expect(verified.status == 0, "\(verified.stderr)")
            try checkLegacyPayload(verified.stdout)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty)
    }
}
