import Foundation
import PinsetCore

/// Each customer's encoded `hashes` array, kept between signing passes.
///
/// Building it (sorting pins, base64 of every key) is most of a pass's work apart from the signature, yet it
/// changes only when the pin content does. The store bumps a customer's content version with every change and
/// never reuses one, so (customer, version) identifies the content and is the key here.
/// Thread-safe: a lock around a dictionary; `SigningPass` reads and fills it from all cores.
public final class EncodedHostsCache: Sendable {
    private let entries = LockedValue<[CustomerName: (version: Int64, bytes: [UInt8])]>([:])

    public init() {}

    func encodedHosts(for pinSet: PinSet) -> [UInt8] {
        if let cached = entries.withLock({ $0[pinSet.customer] }), cached.version == pinSet.version {
            return cached.bytes
        }
        let bytes = BundlePayload.encodedHosts(BundlePayload.publishedHosts(of: pinSet))
        entries.withLock { $0[pinSet.customer] = (pinSet.version, bytes) }
        return bytes
    }

    /// Drops customers that no longer exist, so removed customers do not accumulate.
    func retain(only customers: Set<CustomerName>) {
        entries.withLock { $0 = $0.filter { customers.contains($0.key) } }
    }

    public var count: Int { entries.withLock { $0.count } }
}
