import Foundation
import PinsetClient

/// A fetcher that answers each URL with what the test put there (404 for anything else), and records requests:
/// a trust server with its bundle, its proof and its log's tiles.
final class FakeTrustServer: BundleFetcher, @unchecked Sendable {
    // `@unchecked`: every stored property is only touched under `lock`.
    private let lock = NSLock()
    private var responses: [String: FetchedBundle] = [:]
    private var requests: [URL] = []

    var requestedURLs: [URL] { lock.withLock { requests } }

    func serve(_ body: [UInt8], at url: URL, status: Int = 200) {
        lock.withLock { responses[url.absoluteString] = FetchedBundle(statusCode: status, body: body) }
    }

    func remove(_ url: URL) {
        _ = lock.withLock { responses.removeValue(forKey: url.absoluteString) }
    }

    /// Serves `tiles` (paths below the log's prefix) under `base`, replacing whatever tiles were served before.
    func serveTiles(_ tiles: [String: [UInt8]], base: URL) {
        lock.withLock {
            responses = responses.filter { !$0.key.hasPrefix(base.absoluteString + "tile/") }
            for (path, body) in tiles {
                responses[base.absoluteString + path] = FetchedBundle(statusCode: 200, body: body)
            }
        }
    }

    func forgetRequests() {
        lock.withLock { requests = [] }
    }

    func fetch(from url: URL, timeout: Duration, maximumBodySize: Int) async throws -> FetchedBundle {
        lock.withLock {
            requests.append(url)
            // A proof is asked for with its version in the query; the tests serve one proof per path.
            let withoutQuery = url.absoluteString.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url.absoluteString
            return responses[url.absoluteString] ?? responses[withoutQuery] ?? FetchedBundle(statusCode: 404, body: Array("not found".utf8))
        }
    }
}
