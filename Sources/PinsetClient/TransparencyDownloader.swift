import Foundation

/// Fetches a transparency proof or a hash tile with the updater's fetcher and timeout, under a size limit, and turns
/// every failure into the refusal the caller names.
///
/// The fetcher is the one bundles come through, so an app's own HTTP stack (and its proxy, TLS and timeout
/// settings) serves the log too. Like the bundle, a body is never trusted for being fetched: the status and the
/// size are checked again here whatever the fetcher did.
struct TransparencyDownloader: Sendable {
    let fetcher: any BundleFetcher
    let timeout: Duration

    /// The response, whatever its status; throws on a transport failure or a body over `maximumSize`.
    func fetch(_ url: URL, maximumSize: Int, refusal kind: TransparencyRefusal, what: String) async throws(PinUpdateError) -> FetchedBundle {
        let response: FetchedBundle
        do {
            response = try await fetcher.fetch(from: url, timeout: timeout, maximumBodySize: maximumSize)
        } catch let error as PinUpdateError where error.code == .bodyTooLarge {
            throw LogInclusionCheck.refusal(kind, "\(what) at \(url) is larger than \(maximumSize) bytes (\(error.reason))")
        } catch {
            throw LogInclusionCheck.refusal(kind, "\(what) could not be fetched from \(url): \(error)")
        }
        guard response.body.count <= maximumSize else {
            throw LogInclusionCheck.refusal(
                kind, "\(what) at \(url) is \(response.body.count) bytes; the limit is \(maximumSize)")
        }
        return response
    }

    /// The body of a 200 response; any other status is refused.
    func body(_ url: URL, maximumSize: Int, refusal kind: TransparencyRefusal, what: String) async throws(PinUpdateError) -> [UInt8] {
        let response = try await fetch(url, maximumSize: maximumSize, refusal: kind, what: what)
        guard response.statusCode == 200 else {
            throw LogInclusionCheck.refusal(
                kind, "the server answered \(response.statusCode) for \(what) at \(url)\(response.statusCode == 404 ? "; is the server's transparency log enabled?" : "")")
        }
        return response.body
    }
}
