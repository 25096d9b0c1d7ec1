import Foundation
import NIOCore
import NIOPosix
import PinsetClient
import PinsetCore
import PinsetTestSupport
import Testing

/// The real `URLSessionBundleFetcher` against a real HTTP server on loopback.
@Suite("URLSession fetcher over real HTTP")
struct URLSessionBundleFetcherTests {
    private func withServer<T: Sendable>(
        _ response: [UInt8],
        _ body: (CannedHTTPServer) async throws -> T
    ) async throws -> T {
        try await withEventLoopGroup { group in
            let server = try await CannedHTTPServer(group: group, response: response)
            do {
                let result = try await body(server)
                await server.close()
                return result
            } catch {
                await server.close()
                throw error
            }
        }
    }

    private func configuration(_ fixture: ClientFixture, port: Int) throws -> PinsetClientConfiguration {
        var configuration = fixture.configuration
        configuration.serverURL = URL(string: "http://127.0.0.1:\(port)/")!
        configuration.fetchTimeout = .seconds(10)
        return configuration
    }

    /// A server answering every request with a valid bundle of version 4, and an updater pointed at it.
    private func withVersion4Served(_ fixture: ClientFixture, _ body: (CannedHTTPServer, PinsetUpdater) async throws -> Void) async throws {
        let bundle = try fixture.signed(try fixture.payload(version: 4))
        let response = CannedHTTPServer.response(
            status: "200 OK",
            headers: ["Content-Type: application/pkcs7-mime", "Content-Length: \(bundle.count)"],
            body: bundle
        )
        try await withServer(response) { server in
            let clock = fixture.clock
            try await body(server, PinsetUpdater(configuration: try configuration(fixture, port: server.port), now: clock.now))
        }
    }

    @Test func updateThroughURLSessionIsAcceptedAndStored() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await withVersion4Served(fixture) { server, updater in
            let accepted = try await updater.update()
            #expect(accepted.version == 4)
            #expect(server.requestLines == ["GET /acme.json.signed HTTP/1.1"])
            #expect(fixture.stateFileBytes() != nil)
        }
    }

    @Test func tellsTheServerTheVersionItHoldsOnceItHoldsOne() async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await withVersion4Served(fixture) { server, updater in
            try await updater.update()
            try await updater.update()
            let versionFields = server.requestFields.map { fields in fields.filter { $0.lowercased().hasPrefix("pinset-version:") } }
            // No pins before the first fetch: nothing to report. Then the version accepted.
            #expect(versionFields == [[], ["Pinset-Version: 4"]])
        }
    }

    @Test func notFoundIsReportedWithItsStatus() async throws {
        let response = CannedHTTPServer.response(status: "404 Not Found", headers: ["Content-Length: 9"], body: Array("not found".utf8))
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        try await withServer(response) { server in
            let updater = PinsetUpdater(configuration: try configuration(fixture, port: server.port))
            let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
            #expect(error.code == .httpStatus(404))
            #expect(await updater.currentPinSet == nil)
        }
    }

    @Test func endlessBodyIsCutOffWhileStreaming() async throws {
        // No Content-Length: the only way to notice is to count while reading.
        let body = [UInt8](repeating: UInt8(ascii: "A"), count: 4 * 1024 * 1024)
        let response = CannedHTTPServer.response(status: "200 OK", body: body)
        try await withServer(response) { server in
            let fetcher = URLSessionBundleFetcher()
            let error = try await #require(throws: PinUpdateError.self) {
                try await fetcher.fetch(from: URL(string: "http://127.0.0.1:\(server.port)/x")!, timeout: .seconds(10), maximumBodySize: 64 * 1024)
            }
            #expect(error.code == .bodyTooLarge)
        }
    }

    @Test func announcedOversizedBodyIsRefusedBeforeReading() async throws {
        let body = [UInt8](repeating: UInt8(ascii: "A"), count: 100 * 1024)
        let response = CannedHTTPServer.response(status: "200 OK", headers: ["Content-Length: \(body.count)"], body: body)
        try await withServer(response) { server in
            let fetcher = URLSessionBundleFetcher()
            let error = try await #require(throws: PinUpdateError.self) {
                try await fetcher.fetch(from: URL(string: "http://127.0.0.1:\(server.port)/x")!, timeout: .seconds(10), maximumBodySize: 64 * 1024)
            }
            #expect(error.code == .bodyTooLarge)
        }
    }

    @Test func connectionRefusedIsATransportError() async throws {
        // Bind a port, then close it, so nothing listens there.
        let port = try await withServer([]) { server in server.port }
        let fetcher = URLSessionBundleFetcher()
        let error = try await #require(throws: PinUpdateError.self) {
            try await fetcher.fetch(from: URL(string: "http://127.0.0.1:\(port)/x")!, timeout: .seconds(10), maximumBodySize: 1024)
        }
        #expect(error.code == .transport)
    }

    /// The fetch timeout is a deadline on the whole exchange: a server sending one byte a second, in the head or
    /// in the body, never idles long enough for a per-read timeout, and is cut off when the deadline passes.
    @Test(arguments: [false, true]) func aTricklingServerIsCutOffAtTheFetchTimeout(headFirst: Bool) async throws {
        let fixture = try ClientFixture()
        defer { fixture.directory.remove() }
        // 60 bytes of body at one a second: a minute or more, against a 2 s bound.
        let body = [UInt8](repeating: UInt8(ascii: "A"), count: 60)
        let response = CannedHTTPServer.response(status: "200 OK", headers: ["Content-Length: \(body.count)"], body: body)
        let head = response.count - body.count
        try await withEventLoopGroup { group in
            let server = try await CannedHTTPServer(group: group, response: response, trickleInterval: .seconds(1), trickleAfter: headFirst ? head : 0)
            var configuration = try configuration(fixture, port: server.port)
            configuration.fetchTimeout = .seconds(2)
            let updater = PinsetUpdater(configuration: configuration)
            let started = ContinuousClock.now
            let error = try await #require(throws: PinUpdateError.self) { try await updater.update() }
            let elapsed = ContinuousClock.now - started
            await server.close()
            #expect(error.code == .transport)
            #expect(error.reason.contains("fetch timeout of 2 s"), "\(error.reason)")
            // Well before the trickle would end (over 60 s); generous for a loaded machine.
            #expect(elapsed < .seconds(40), "\(elapsed)")
            #expect(await updater.currentPinSet == nil)
        }
    }
}
