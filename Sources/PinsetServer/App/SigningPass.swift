import Dispatch
import Foundation
import PinsetCore
import PinsetSigning

/// Signs every customer's pin set at one instant. Pure with respect to I/O: the caller loads the pin sets
/// and publishes the result, so `pinset sign --out` and the server produce the same bytes the same way.
public struct SigningPass: Sendable {
    public let signer: BundleSigner
    /// How long a bundle stays acceptable to Pinset clients (its `expires` minus its `timestamp`).
    public let bundleLifetime: Int64
    /// Encoded pin content reused across passes; `nil` encodes everything every time.
    public let hostsCache: EncodedHostsCache?

    public init(signer: BundleSigner, bundleLifetime: Int64, hostsCache: EncodedHostsCache? = nil) {
        self.signer = signer
        self.bundleLifetime = bundleLifetime
        self.hostsCache = hostsCache
    }

    /// Signs all pin sets using every core. Fails as a whole if any one cannot be signed, so a pass never
    /// publishes a mix of old and new bundles.
    public func run(_ pinSets: [PinSet], now: Date) throws -> [SignedBundle] {
        let timestamp = Int64(now.timeIntervalSince1970.rounded(.down))
        let results = ResultSlots(count: pinSets.count)
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chunk = max(1, (pinSets.count + workers * 4 - 1) / (workers * 4))
        let chunks = (pinSets.count + chunk - 1) / chunk
        DispatchQueue.concurrentPerform(iterations: chunks) { index in
            let range = (index * chunk)..<min(pinSets.count, (index + 1) * chunk)
            for i in range {
                let pinSet = pinSets[i]
                let expires = timestamp + bundleLifetime
                let hosts = hostsCache?.encodedHosts(for: pinSet) ?? BundlePayload.encodedHosts(pinSet.hosts.map(PinnedHost.init))
                let content = BundlePayload.encoded(
                    customer: pinSet.customer, timestamp: timestamp, expires: expires, version: pinSet.version, encodedHosts: hosts
                )
                results.set(i, Result {
                    SignedBundle(
                        customer: pinSet.customer,
                        bytes: try signer.sign(content: content),
                        version: pinSet.version,
                        timestamp: timestamp,
                        expires: expires
                    )
                })
            }
        }
        let bundles = try results.values.map { try $0.get() }
        hostsCache?.retain(only: Set(pinSets.map(\.customer)))
        return bundles
    }
}

/// Write-once slots filled from `concurrentPerform`; each index is written by exactly one iteration.
private final class ResultSlots: @unchecked Sendable {
    private var storage: [Result<SignedBundle, any Error>?]
    private let lock = NSLock()

    init(count: Int) {
        storage = Array(repeating: nil, count: count)
    }

    func set(_ index: Int, _ value: Result<SignedBundle, any Error>) {
        lock.withLock { storage[index] = value }
    }

    var values: [Result<SignedBundle, any Error>] {
        lock.withLock { storage.map { $0 ?? .failure(SigningPassIncomplete()) } }
    }
}

struct SigningPassIncomplete: Error, CustomStringConvertible {
    var description: String { "a signing pass finished without signing every customer" }
}
