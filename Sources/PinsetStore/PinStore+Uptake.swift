import Foundation
import PinsetCore

/// How long a bundle fetched from one server instance can go on being accepted by apps, from that instance's
/// settings: what the rotation gate must wait out after a key is first published.
public struct ServingTimes: Hashable, Sendable {
    /// The longest time between a change and the bundle that carries it (the instance's resign interval).
    public var resignIntervalSeconds: Int64
    /// How long after signing apps accept a freshly downloaded bundle.
    public var freshnessWindowSeconds: Int64
    /// The longest `Cache-Control: max-age` the instance sends: how long a cache on the way may hand it out.
    public var maxAgeSeconds: Int64
    /// How long an instance that cannot read the database goes on re-signing what it read last
    /// (`maxContentStalenessSeconds`): bundles without a change can be signed that much later.
    public var contentStalenessSeconds: Int64
    /// How long the bundles the instance signs stay valid; nil when not reported.
    public var bundleLifetimeSeconds: Int64?

    public init(resignIntervalSeconds: Int64, freshnessWindowSeconds: Int64, maxAgeSeconds: Int64, contentStalenessSeconds: Int64 = 0, bundleLifetimeSeconds: Int64? = nil) {
        self.resignIntervalSeconds = resignIntervalSeconds
        self.freshnessWindowSeconds = freshnessWindowSeconds
        self.maxAgeSeconds = maxAgeSeconds
        self.contentStalenessSeconds = contentStalenessSeconds
        self.bundleLifetimeSeconds = bundleLifetimeSeconds
    }

    /// After a change, the longest time an app may go on accepting a bundle signed before it.
    public var longestAcceptanceOfOlderBundle: Int64 { resignIntervalSeconds + contentStalenessSeconds + freshnessWindowSeconds + maxAgeSeconds }

    /// The longest of several instances' times, field by field.
    public static func longest(_ times: [ServingTimes]) -> ServingTimes? {
        guard let first = times.first else { return nil }
        return times.dropFirst().reduce(first) { result, next in
            ServingTimes(
                resignIntervalSeconds: max(result.resignIntervalSeconds, next.resignIntervalSeconds),
                freshnessWindowSeconds: max(result.freshnessWindowSeconds, next.freshnessWindowSeconds),
                maxAgeSeconds: max(result.maxAgeSeconds, next.maxAgeSeconds),
                contentStalenessSeconds: max(result.contentStalenessSeconds, next.contentStalenessSeconds),
                bundleLifetimeSeconds: [result.bundleLifetimeSeconds, next.bundleLifetimeSeconds].compactMap { $0 }.max()
            )
        }
    }
}

/// The bundle fetches one server instance counted in its window, as it shares them through the store.
public struct UptakeSnapshot: Hashable, Sendable {
    /// Fetches that reported no version (legacy clients, first launches) are stored under this held version.
    public static let unknownVersion: Int64 = 0
    /// Fetches whose version was counted but not itemized (beyond the per-minute bound).
    public static let otherVersion: Int64 = -1

    /// A random id the instance chose at start.
    public var instance: String
    public var windowSeconds: Int64
    public var servingTimes: ServingTimes
    public var takenAt: Date
    /// After this the figures no longer count: the instance stopped without removing them.
    public var validUntil: Date
    /// Per customer, fetches by the version the client said it held (see `unknownVersion`, `otherVersion`).
    public var fetches: [CustomerName: [Int64: Int]]

    public init(instance: String, windowSeconds: Int64, servingTimes: ServingTimes, takenAt: Date, validUntil: Date, fetches: [CustomerName: [Int64: Int]]) {
        self.instance = instance
        self.windowSeconds = windowSeconds
        self.servingTimes = servingTimes
        self.takenAt = takenAt
        self.validUntil = validUntil
        self.fetches = fetches
    }
}

/// One customer's fetches as all running instances counted them.
public struct SharedUptake: Hashable, Sendable {
    /// The instances whose figures are current, with their settings and window.
    public var instances: [Instance]
    /// Fetches by held version, summed over `instances` (see `UptakeSnapshot.unknownVersion`, `.otherVersion`).
    public var fetches: [Int64: Int]

    public struct Instance: Hashable, Sendable {
        public var instance: String
        public var windowSeconds: Int64
        public var servingTimes: ServingTimes
        public var takenAt: Date

        public init(instance: String, windowSeconds: Int64, servingTimes: ServingTimes, takenAt: Date) {
            self.instance = instance
            self.windowSeconds = windowSeconds
            self.servingTimes = servingTimes
            self.takenAt = takenAt
        }
    }

    public init(instances: [Instance], fetches: [Int64: Int]) {
        self.instances = instances
        self.fetches = fetches
    }
}

extension PinStore {
    /// Replaces the instance's shared figures with `snapshot`, in one transaction. Counts of customers that no
    /// longer exist are left out. Touches no content version and no change counter: nothing is re-signed.
    public func replaceUptakeSnapshot(_ snapshot: UptakeSnapshot) throws {
        try database.write { db in
            try db.execute("DELETE FROM uptake_instance WHERE instance = ?", [snapshot.instance])
            // Rows of instances that stopped without removing theirs: dropped by whoever writes next.
            try db.execute("DELETE FROM uptake_instance WHERE valid_until < ?", [snapshot.takenAt])
            try db.execute("""
                INSERT INTO uptake_instance (instance, window_seconds, resign_interval_seconds, freshness_window_seconds, max_age_seconds,
                                             content_staleness_seconds, taken_at, valid_until, bundle_lifetime_seconds)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [snapshot.instance, snapshot.windowSeconds, snapshot.servingTimes.resignIntervalSeconds,
                      snapshot.servingTimes.freshnessWindowSeconds, snapshot.servingTimes.maxAgeSeconds,
                      snapshot.servingTimes.contentStalenessSeconds, snapshot.takenAt, snapshot.validUntil, snapshot.servingTimes.bundleLifetimeSeconds])
            guard !snapshot.fetches.isEmpty else { return }
            var ids: [String: Int64] = [:]
            try db.forEachRow("SELECT name, id FROM customer", []) { row in
                ids[try row.decode(String.self, atIndex: 0).lowercased()] = try row.decode(atIndex: 1)
            }
            var pending: [any SQLArgument] = []
            func flush() throws {
                guard !pending.isEmpty else { return }
                let rows = pending.count / 4
                try db.execute("INSERT INTO uptake_count (instance, customer_id, held_version, fetches) VALUES "
                    + repeatElement("(?, ?, ?, ?)", count: rows).joined(separator: ", "), pending)
                pending.removeAll(keepingCapacity: true)
            }
            for (customer, versions) in snapshot.fetches {
                guard let id = ids[customer.rawValue.lowercased()] else { continue }
                for (version, count) in versions where count > 0 && version >= Self.lowestStoredVersion {
                    pending.append(contentsOf: [snapshot.instance, id, version, Int64(count)] as [any SQLArgument])
                    if pending.count >= 200 * 4 { try flush() }
                }
            }
            try flush()
        }
    }

    private static let lowestStoredVersion = UptakeSnapshot.otherVersion

    /// Removes the instance's shared figures (when it stops).
    public func removeUptakeSnapshot(instance: String) throws {
        try database.write { db in
            _ = try db.execute("DELETE FROM uptake_instance WHERE instance = ?", [instance])
        }
    }

    /// The longest bundle lifetime and re-sign interval among the server instances whose shared figures are still
    /// valid at `now`: what an identity made or installed now must outlive. nil when no running instance reported
    /// its bundle lifetime.
    public func runningSigningTimes(at now: Date) throws -> (bundleLifetimeSeconds: Int64, resignIntervalSeconds: Int64)? {
        try database.read { db in
            try db.fetchOne("""
                SELECT max(bundle_lifetime_seconds), max(resign_interval_seconds) FROM uptake_instance
                WHERE valid_until >= ? AND bundle_lifetime_seconds IS NOT NULL
                """, [now]) { row -> (Int64, Int64)? in
                guard let lifetime: Int64 = try row.decode(atIndex: 0), let interval: Int64 = try row.decode(atIndex: 1) else { return nil }
                return (lifetime, interval)
            } ?? nil
        }
    }

    /// The customer's fetches summed over every instance whose figures are still valid at `now`, with those
    /// instances' settings.
    public func sharedUptake(of customer: CustomerName, at now: Date) throws -> SharedUptake {
        try database.read { db in
            let instances = try db.fetchAll("""
                SELECT instance, window_seconds, resign_interval_seconds, freshness_window_seconds, max_age_seconds, content_staleness_seconds, taken_at
                FROM uptake_instance WHERE valid_until >= ? ORDER BY instance
                """, [now]) { row in
                SharedUptake.Instance(
                    instance: try row.decode(atIndex: 0), windowSeconds: try row.decode(atIndex: 1),
                    servingTimes: ServingTimes(resignIntervalSeconds: try row.decode(atIndex: 2), freshnessWindowSeconds: try row.decode(atIndex: 3),
                                               maxAgeSeconds: try row.decode(atIndex: 4), contentStalenessSeconds: try row.decode(atIndex: 5)),
                    takenAt: try row.decode(atIndex: 6)
                )
            }
            var fetches: [Int64: Int] = [:]
            try db.forEachRow("""
                SELECT uptake_count.held_version, CAST(sum(uptake_count.fetches) AS BIGINT)
                FROM uptake_count JOIN uptake_instance ON uptake_count.instance = uptake_instance.instance
                JOIN customer ON uptake_count.customer_id = customer.id
                WHERE customer.name = ? AND uptake_instance.valid_until >= ?
                GROUP BY uptake_count.held_version
                """, [customer.rawValue, now]) { row in
                fetches[try row.decode(atIndex: 0)] = Int(try row.decode(Int64.self, atIndex: 1))
            }
            return SharedUptake(instances: instances, fetches: fetches)
        }
    }
}
