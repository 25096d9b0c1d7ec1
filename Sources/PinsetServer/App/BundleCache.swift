import Foundation
import PinsetCore
import PinsetPublishing
import PinsetSigning

/// The signed bundles being served. A signing pass swaps in new snapshots (all at once, or batch by batch for a
/// large deployment), so a request sees a customer's previous bundle or its new one, never a mix. Reads are a
/// lock and a dictionary lookup.
public final class BundleCache: Sendable {
    public struct Snapshot: Sendable {
        public internal(set) var bundles: [CustomerName: SignedBundle]
        /// Unix seconds of the oldest bundle served to a customer without a failure: what readiness judges.
        public internal(set) var signedAt: Int64
        /// Customers the pass could not sign, with the reason. Their last good bundle, if any, stays in
        /// `bundles` and is served while clients still accept it.
        public internal(set) var failures: [CustomerName: String]

        public static let empty = Snapshot(bundles: [:], signedAt: 0, failures: [:])

        /// The signing time of the oldest bundle, for the "age of the oldest served bundle" metric.
        public var oldestTimestamp: Int64? { bundles.values.lazy.map(\.timestamp).min() }

        /// The content version served to each customer, what uptake is measured against.
        public var latestVersions: [CustomerName: Int64] { bundles.mapValues(\.version) }
    }

    private let current = LockedValue(Snapshot.empty)

    public init() {}

    public var snapshot: Snapshot { current.withLock { $0 } }

    public func bundle(for customer: CustomerName) -> SignedBundle? {
        // Copied under the lock, searched outside it: concurrent requests hold the lock only for the copy.
        current.withLock { $0 }.bundles[customer]
    }

    /// Whether the last pass failed to sign `customer` (it then has no bundle, or an older one).
    public func failure(for customer: CustomerName) -> String? {
        current.withLock { $0 }.failures[customer]
    }

    public func replace(with bundles: [SignedBundle], signedAt: Int64) {
        replace(with: bundles, failures: [], signedAt: signedAt)
    }

    /// Swaps in a pass's bundles. A customer in `failures` keeps the bundle it had, so a key problem of one
    /// customer does not take its pins off the air before clients would refuse them anyway.
    public func replace(with bundles: [SignedBundle], failures: [SigningIdentityFailure], signedAt: Int64) {
        current.withLock { previous in
            var map: [CustomerName: SignedBundle] = [:]
            map.reserveCapacity(bundles.count + failures.count)
            for bundle in bundles {
                map[bundle.customer] = Self.replacing(previous.bundles[bundle.customer], with: bundle)
            }
            var failed: [CustomerName: String] = [:]
            for failure in failures {
                failed[failure.customer] = failure.reason
                if let kept = previous.bundles[failure.customer] { map[failure.customer] = kept }
            }
            previous = Snapshot(bundles: map, signedAt: signedAt, failures: failed)
        }
    }

    /// Swaps in one batch of a pass that signs the deployment batch by batch: its customers get their new
    /// bundles (or, where they failed, keep the one they had), every other customer keeps what it had. The old
    /// bundles of a batch are freed as it lands, so a pass never holds two bundles for every customer.
    /// `keepingFailedCustomersBundles` false: a customer that failed loses the bundle it had (one this process
    /// did not sign, taken from persisted bundles only if the pass could have kept it), unless it failed because
    /// the store holds an older version than that bundle.
    ///
    /// Changed in place, so a batch costs its own customers, not a copy of every customer's entry (a request
    /// reading the snapshot at that moment makes it a copy once). `signedAt` only moves back here, to the
    /// batch's oldest bundle; `finishPass` sets it exactly.
    public func merge(_ bundles: [SignedBundle], failures: [SigningIdentityFailure], keepingFailedCustomersBundles: Bool = true) {
        current.withLock { snapshot in
            for bundle in bundles {
                snapshot.bundles[bundle.customer] = Self.replacing(snapshot.bundles[bundle.customer], with: bundle)
                snapshot.failures[bundle.customer] = nil
                snapshot.signedAt = min(snapshot.signedAt, bundle.timestamp)
            }
            for failure in failures {
                snapshot.failures[failure.customer] = failure.reason
                // A bundle newer than the store's content stays whatever its source: the store went back, not the bundle.
                if !keepingFailedCustomersBundles && failure.kind != .versionBehindServed { snapshot.bundles[failure.customer] = nil }
            }
        }
    }

    /// Puts `bundles` in place of the ones served with the same bytes (the same ETag and signing time), which
    /// they hold elsewhere (moved from one file to another); a customer whose bundle was replaced meanwhile keeps
    /// the new one. Nothing else about the snapshot changes.
    public func relocate(_ bundles: [SignedBundle]) {
        current.withLock { snapshot in
            for var bundle in bundles {
                guard let served = snapshot.bundles[bundle.customer], served.etag == bundle.etag, served.timestamp == bundle.timestamp else {
                    continue
                }
                bundle.lastModifiedIsValidator = served.lastModifiedIsValidator
                snapshot.bundles[bundle.customer] = bundle
            }
        }
    }

    /// Ends a pass made of `merge`s: customers that no longer exist lose their bundle, the failures are exactly
    /// the pass's, and `signedAt` becomes the oldest bundle served to a customer without a failure and not `held`
    /// (new content waiting for witnesses keeps its customer's older bundle, which this pass could not re-sign; one
    /// such customer must not take the whole instance out of readiness), or `passTime` when there is none.
    public func finishPass(customers: Set<CustomerName>, failures: [SigningIdentityFailure], held: Set<CustomerName> = [], passTime: Int64) {
        current.withLock { snapshot in
            if !snapshot.bundles.keys.allSatisfy(customers.contains) {
                snapshot.bundles = snapshot.bundles.filter { customers.contains($0.key) }
            }
            var failed: [CustomerName: String] = [:]
            for failure in failures where customers.contains(failure.customer) { failed[failure.customer] = failure.reason }
            snapshot.failures = failed
            snapshot.signedAt = Self.oldest(snapshot.bundles, excluding: failed, held: held) ?? passTime
        }
    }

    /// Last-Modified has a resolution of one second (RFC 9110 §8.8.2.2): a bundle signed in the same second as a
    /// different one it replaces cannot be told from it by date, so If-Modified-Since must not answer 304 for it
    /// (the ETag still can).
    private static func replacing(_ replaced: SignedBundle?, with bundle: SignedBundle) -> SignedBundle {
        var bundle = bundle
        if let replaced, replaced.timestamp == bundle.timestamp, replaced.etag != bundle.etag || !replaced.lastModifiedIsValidator {
            bundle.lastModifiedIsValidator = false
        }
        return bundle
    }

    private static func oldest(_ bundles: [CustomerName: SignedBundle], excluding failed: [CustomerName: String], held: Set<CustomerName>) -> Int64? {
        var oldest: Int64?
        for (customer, bundle) in bundles where failed[customer] == nil && !held.contains(customer) {
            oldest = min(oldest ?? bundle.timestamp, bundle.timestamp)
        }
        return oldest
    }
}
