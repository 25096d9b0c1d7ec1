#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Reports built exactly as TrustKit-Android 1.1.5 and TrustKit 3.0.0 for iOS build them, uploaded with curl the
/// way each library uploads (Android: chunked, as `setChunkedStreamingMode(0)` does; iOS: with
/// `Content-Length`), to a real `pinset serve`, and counted.
@Suite(.serialized) struct TrustKitWireReportTests {
    /// DER of a certificate made with openssl.
    static func der(_ pemPath: String, in cli: PinsetCLI) throws -> [UInt8] {
        let out = cli.directory.file("\(UUID().uuidString.prefix(6)).der")
        #expect(try ProcessRunner.run("openssl", ["x509", "-in", pemPath, "-outform", "der", "-out", out]).status == 0)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// POSTs `body` with curl; `chunked` sends it with `Transfer-Encoding: chunked`. Returns the status and curl's
    /// trace of what it sent and received.
    static func curlPost(_ body: [UInt8], port: Int, chunked: Bool, extra: [String] = [], in cli: PinsetCLI) throws -> (status: Int, trace: String) {
        let file = cli.directory.file("report-\(UUID().uuidString.prefix(6)).json")
        try Data(body).write(to: URL(fileURLWithPath: file))
        var arguments = ["-sS", "-v", "--max-time", "20", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json"]
        if chunked { arguments += ["-H", "Transfer-Encoding: chunked"] }
        arguments += extra + ["--data-binary", "@\(file)", "http://127.0.0.1:\(port)/report/acme"]
        let result = try ProcessRunner.run("curl", arguments, timeout: 30)
        return (Int(result.stdoutText) ?? 0, result.stderr)
    }

    @Test func reportsAsEachTrustKitSendsThemAreAcceptedAndCounted() async throws {
        let setup = try ReportsListenerTests.Setup()
        defer { setup.stop() }
        let cli = setup.cli
        let leaf = try Self.der(cli.directory.file("unpinned.pem"), in: cli)
        let intermediate = try Self.der(try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "intermediate", curve: "secp384r1").cert, in: cli)
        let root = try Self.der(try CLIPinSourceTests.makeCertificate(in: cli.directory, name: "root", curve: "secp521r1").cert, in: cli)
        var failure = TrustKitWireReport.Failure(validatedChain: [leaf, intermediate, root], servedChain: [leaf, intermediate])

        failure.vendorID = "android-install"
        let android = TrustKitWireReport.android(failure)
        let androidText = String(decoding: android, as: UTF8.self)
        // What a strict parser would refuse: a member it does not read, 76-column PEM lines, and a `Z` after the
        // device's local time (11:06:40 UTC on a UTC+1 device), which names no zone.
        #expect(androidText.contains("\"served-certificate-chain\""))
        #expect(androidText.contains("\"2026-11-18T12:06:40Z\""), "\(androidText.prefix(600))")
        #expect(TrustKitWireReport.androidBase64Default(leaf).split(separator: "\n").first?.count == 76)
        let androidSent = try Self.curlPost(android, port: setup.reportsPort, chunked: true, in: cli)
        #expect(androidSent.trace.contains("> Transfer-Encoding: chunked"), "\(androidSent.trace)")
        #expect(androidSent.status == 202, "\(androidSent.trace)")

        // The same body with Content-Length (as a proxy that buffers uploads forwards it).
        failure.vendorID = "android-buffered-install"
        #expect(try Self.curlPost(TrustKitWireReport.android(failure), port: setup.reportsPort, chunked: false, in: cli).status == 202)

        failure.vendorID = "android-sample-install"
        let sample = TrustKitWireReport.androidSampleShape(failure)
        #expect(try Self.curlPost(sample, port: setup.reportsPort, chunked: true, in: cli).status == 202)

        failure.vendorID = "ios-install"
        let iOS = TrustKitWireReport.iOS(failure)
        #expect(String(decoding: iOS, as: UTF8.self).contains("\\r\\n"))
        #expect(try Self.curlPost(iOS, port: setup.reportsPort, chunked: false, in: cli).status == 202)

        // Result 4: TrustKit's user-defined trust anchor (macOS), labelled as both TrustKits define it.
        failure.vendorID = "mac-install"
        failure.validationResult = 4
        #expect(try Self.curlPost(TrustKitWireReport.iOS(failure), port: setup.reportsPort, chunked: false, in: cli).status == 202)

        let rows = try await setup.reportRows { rows in rows.reduce(0) { $0 + ($1["reports"] as? Int ?? 0) } >= 5 }
        let noMatch = try #require(rows.first { $0["validationResult"] as? Int == 1 }, "\(rows)")
        #expect(noMatch["reports"] as? Int == 4)
        #expect(noMatch["hostname"] as? String == "api.example.com")
        #expect(noMatch["servedKeyPinned"] as? Bool == false)
        #expect(noMatch["servedLeafSPKISHA256"] as? String == (try Self.spkiSHA256(cli.directory.file("unpinned.pem"))))
        let anchor = try #require(rows.first { $0["validationResult"] as? Int == 4 }, "\(rows)")
        #expect(anchor["result"] as? String == "user-defined-trust-anchor")
        let table = try cli.run(["reports", "acme", "--data-dir", cli.dataDir])
        #expect(table.stdoutText.contains("user-defined-trust-anchor"), "\(table.stdoutText)")
    }

    @Test func chunkedReportsStayWithinTheSizeLimitAndStrictFraming() async throws {
        let setup = try ReportsListenerTests.Setup(reports: ["maxBodyBytes": 4096])
        defer { setup.stop() }
        let port = setup.reportsPort
        let cli = setup.cli
        let before = try cli.databaseDump()
        let head = "POST /report/acme HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        func send(_ content: String) throws -> Int {
            ReportsListenerTests.status(of: try RawClient.exchange(port: port, Array((head + content).utf8)).response)
        }
        // Larger than maxBodyBytes once decoded: refused, with curl as with a raw socket.
        let large = [UInt8](repeating: UInt8(ascii: " "), count: 5000)
        #expect(try Self.curlPost(large, port: port, chunked: true, in: cli).status == 413)
        #expect(try send("1001\r\n") == 413)
        #expect(try send("2\r\n{}X\r\n0\r\n\r\n") == 400)
        #expect(try send("2\n{}\r\n0\r\n\r\n") == 400)
        #expect(try send("2\r\n{}\r\n0\r\nbad trailer\r\n\r\n") == 400)
        // A chunk stream that never ends is answered 408 at the request deadline (2 s in these tests): a chunk every
        // 200 ms keeps the connection from ever idling, and the few bytes stay far below the size limit, so only
        // the deadline can end it, and not before it passed. The 60 s only keep a broken server from holding the test.
        let fd = try RawClient.connect(port: port)
        defer { close(fd) }
        let started = Date()
        _ = Array(head.utf8).withUnsafeBytes { SystemCall.send(fd, $0) }
        var response: [UInt8] = []
        while Date().timeIntervalSince(started) < 60 && response.isEmpty {
            _ = Array("1\r\n \r\n".utf8).withUnsafeBytes { SystemCall.send(fd, $0) }
            response = RawClient.readUntilClose(fd, timeout: 0.2).0
        }
        #expect(ReportsListenerTests.status(of: response) == 408, "\(String(decoding: response, as: UTF8.self))")
        #expect(Date().timeIntervalSince(started) >= 1.5)
        // Duplicate members and invalid UTF-8 are still refused when chunked.
        let duplicate = #"{"hostname":"a.example","hostname":"b.example"}"#
        #expect(try send(String(duplicate.utf8.count, radix: 16) + "\r\n" + duplicate + "\r\n0\r\n\r\n") == 400)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try cli.databaseDump() == before)
    }

    @Test func expectContinueIsAnsweredBeforeTheBodyAndNotForTooLargeBodies() throws {
        let setup = try ReportsListenerTests.Setup(reports: ["maxBodyBytes": 4096])
        defer { setup.stop() }
        let report = TrustKitReportFixture.json(leafPEM: setup.unpinnedLeafPEM)
        // curl waits up to --expect100-timeout (20 s) for the 100 before sending the body anyway: done well before
        // that, the 100 came first. The margin is for a busy machine, where one exchange can take seconds.
        let started = Date()
        let sent = try Self.curlPost(report, port: setup.reportsPort, chunked: false,
                                     extra: ["-H", "Expect: 100-continue", "--expect100-timeout", "20"], in: setup.cli)
        #expect(sent.status == 202, "\(sent.trace)")
        #expect(sent.trace.contains("< HTTP/1.1 100 Continue"), "\(sent.trace)")
        #expect(Date().timeIntervalSince(started) < 15)
        let chunked = try Self.curlPost(report, port: setup.reportsPort, chunked: true,
                                        extra: ["-H", "Expect: 100-continue", "--expect100-timeout", "20"], in: setup.cli)
        #expect(chunked.status == 202 && chunked.trace.contains("< HTTP/1.1 100 Continue"), "\(chunked.trace)")

        let tooLarge = [UInt8](repeating: UInt8(ascii: " "), count: 5000)
        let refused = try Self.curlPost(tooLarge, port: setup.reportsPort, chunked: false,
                                        extra: ["-H", "Expect: 100-continue", "--expect100-timeout", "10"], in: setup.cli)
        #expect(refused.status == 413, "\(refused.trace)")
        #expect(!refused.trace.contains("100 Continue"), "\(refused.trace)")
    }

    static func spkiSHA256(_ pemPath: String) throws -> String {
        let script = "openssl x509 -in '\(pemPath)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
        return try ProcessRunner.run("/bin/sh", ["-c", script]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
