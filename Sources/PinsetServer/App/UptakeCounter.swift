import Foundation
import PinsetCore
import PinsetHTTP

/// Counts, per customer, the bundle fetches of the last hour (or a shorter configured window) by the content version the client said it held
/// (`Pinset-Version`), so that an operator can see how far a pin change has spread.
///
/// Memory is bounded whatever clients send: one bucket per minute of the window per event loop thread, and in each
/// bucket at most ``maximumVersionsPerBucket`` distinct versions besides the ones served in that minute; further versions are
/// counted as "other". The served version keeps its own count so that a client inventing versions cannot push
/// the fetches on the latest into "other" and make the share on latest read zero. Customers are only those the
/// server has a bundle for, a set the operator bounds. Nothing about the client is kept.
///
/// Thread-safe: called on connection queues for every bundle request; one short critical section each.
public final class UptakeCounter: Sendable {
    /// Enough for the versions of a rollout in flight; beyond it a flood of invented versions lands in "other".
    public static let maximumVersionsPerBucket = 16
    /// Content versions are positive `Int64`; 18 digits always fit one.
    static let maximumHeaderDigits = 18
    static let bucketSeconds: Int64 = 60
    /// The window when none is configured: the last hour.
    public static let defaultWindowSeconds: Int64 = 3600

    /// Minutes counted: the current one and those before it, `windowSeconds / 60` in all.
    let bucketCount: Int
    public var windowSeconds: Int64 { Self.bucketSeconds * Int64(bucketCount) }

    /// What one fetch reported.
    public enum Reported: Hashable, Sendable {
        case version(Int64)
        /// No header, a malformed one, or several: a legacy client, curl, or a client without verified pins.
        case unknown
    }

    struct Bucket: Sendable {
        var minute: Int64
        var versions: [Int64: Int] = [:]
        var other = 0
        var unknown = 0
    }

    /// One ring per customer in each shard; a request counts in the shard of the event loop thread serving it, so
    /// the loops never wait for each other's lock. A summary adds the shards up.
    private let shards: [LockedValue<[CustomerName: [Bucket]]>] = (0..<shardCount).map { _ in LockedValue([:]) }
    private static let shardCount = 8

    /// - Parameter windowSeconds: how far back fetches count, in whole minutes (60 to 3600 seconds).
    public init(windowSeconds: Int64 = defaultWindowSeconds) {
        bucketCount = Int(min(max(windowSeconds / Self.bucketSeconds, 1), 60))
    }

    /// Strict on purpose: decimal digits only, at most ``maximumHeaderDigits``, exactly one field. Anything else
    /// is "unknown" and never fails the request.
    public static func reported(in request: HTTPRequestHead) -> Reported {
        // Read in place on every bundle request: no array of values, no strings.
        var fields = 0
        var reported = Reported.unknown
        request.forEachValue(ofHeader: HeldVersionHeader.name) { value in
            fields += 1
            reported = fields == 1 ? parse(value) : .unknown
            return fields == 1
        }
        return reported
    }

    static func parse(_ value: UnsafeBufferPointer<UInt8>) -> Reported {
        guard !value.isEmpty, value.count <= maximumHeaderDigits else { return .unknown }
        var version: Int64 = 0
        var index = 0
        while index < value.count {
            let byte = value[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return .unknown }
            version = version * 10 + Int64(byte - UInt8(ascii: "0"))
            index += 1
        }
        return version > 0 ? .version(version) : .unknown
    }

    static func parse(_ value: String) -> Reported {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= maximumHeaderDigits,
              utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let version = Int64(value), version > 0
        else { return .unknown }
        return .version(version)
    }

    /// - Parameter servedVersion: the version this fetch was answered with; counted under its own key even when
    ///   the minute already holds ``maximumVersionsPerBucket`` others.
    public func record(_ reported: Reported, customer: CustomerName, servedVersion: Int64? = nil, at time: Date) {
        let minute = Self.minute(of: time)
        let count = Int64(bucketCount)
        let slot = Int((minute % count + count) % count)
        let bucketCount = self.bucketCount
        shards[LoopThread.current % Self.shardCount].withLock { all in
            if all[customer] == nil { all[customer] = Array(repeating: Bucket(minute: .min), count: bucketCount) }
            // In place: the ring and its bucket are not copied on every request.
            Self.count(reported, servedVersion: servedVersion, minute: minute, into: &all[customer]![slot])
        }
    }

    private static func count(_ reported: Reported, servedVersion: Int64?, minute: Int64, into bucket: inout Bucket) {
        if bucket.minute != minute { bucket = Bucket(minute: minute) }
        switch reported {
        case .unknown:
            bucket.unknown += 1
        case .version(let version) where servedVersion.map({ version > $0 }) ?? false:
            // Above the version served now: never served here, an invented claim. Counted, not itemized.
            bucket.unknown += 1
        case .version(let version):
            if version == servedVersion || bucket.versions[version] != nil || bucket.versions.count < maximumVersionsPerBucket {
                bucket.versions[version, default: 0] += 1
            } else {
                bucket.other += 1
            }
        }
    }

    /// The last hour per customer, measured against `latest` (the version each customer is served now).
    /// Customers with no fetch in the window are left out, and forgotten.
    public func summary(latest: [CustomerName: Int64], at time: Date) -> [CustomerName: UptakeSummary] {
        let currentMinute = Self.minute(of: time)
        let oldestMinute = currentMinute - Int64(bucketCount) + 1
        struct Sums {
            var versions: [Int64: Int] = [:]
            var other = 0
            var unknown = 0
        }
        var sums: [CustomerName: Sums] = [:]
        for shard in shards {
            // Summed from a copy, outside the lock, so that a scrape does not hold up the requests being counted.
            let rings = shard.withLock { $0 }
            var idle: [CustomerName] = []
            for (customer, ring) in rings {
                var sum = sums[customer] ?? Sums()
                var counted = false
                // Bounded above too: after the wall clock steps back, minutes "from the future" are not the last hour.
                for bucket in ring where bucket.minute >= oldestMinute && bucket.minute <= currentMinute {
                    sum.versions.merge(bucket.versions, uniquingKeysWith: +)
                    sum.other += bucket.other
                    sum.unknown += bucket.unknown
                    counted = counted || !bucket.versions.isEmpty || bucket.other > 0 || bucket.unknown > 0
                }
                if counted { sums[customer] = sum } else { idle.append(customer) }
            }
            if !idle.isEmpty {
                shard.withLock { all in
                    // Checked again: a fetch may have arrived since the copy.
                    for customer in idle where all[customer]?.allSatisfy({ $0.minute < oldestMinute }) == true {
                        all[customer] = nil
                    }
                }
            }
        }
        var result: [CustomerName: UptakeSummary] = [:]
        for (customer, sum) in sums {
            result[customer] = UptakeSummary(latestVersion: latest[customer], versions: sum.versions, otherVersions: sum.other, unknown: sum.unknown)
        }
        return result
    }

    static func minute(of time: Date) -> Int64 {
        Int64(time.timeIntervalSince1970.rounded(.down)) / bucketSeconds
    }
}

/// One customer's fetches in the uptake window.
public struct UptakeSummary: Sendable, Equatable {
    /// The version served now; nil when the customer is no longer served.
    public let latestVersion: Int64?
    /// Fetches per reported version (at most ``UptakeCounter/maximumVersionsPerBucket`` per minute, and the
    /// versions served in it).
    public let versions: [Int64: Int]
    /// Fetches whose version did not fit the per-minute bound.
    public let otherVersions: Int
    /// Fetches that reported no valid version.
    public let unknown: Int

    public var fetches: Int { reported + unknown }
    public var reported: Int { versions.values.reduce(0, +) + otherVersions }
    public var onLatest: Int { latestVersion.flatMap { versions[$0] } ?? 0 }
    /// Of the fetches that reported a version, the fraction already on the latest; nil when none reported, or
    /// when nothing is served now (a customer that cannot be signed): 0 would read as "no app updated" in the
    /// middle of that incident. Unknown fetches are left out: legacy clients never report, and would hold the
    /// share below 1 for ever.
    public var shareOnLatest: Double? {
        guard latestVersion != nil, reported > 0 else { return nil }
        return Double(onLatest) / Double(reported)
    }
    public var oldestVersion: Int64? { versions.keys.min() }
}
