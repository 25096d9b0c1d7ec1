import PinsetCore

/// The outcome of adding or removing pins: what changed and how many pins the host has now, so the caller
/// can warn when a host is left without a backup pin (`HostPins.minimumRecommendedPins`).
public struct PinChange: Hashable, Sendable {
    public var customer: CustomerName
    public var hostname: Hostname
    /// SPKI hashes that were added or removed, in the order given.
    public var changed: [SHA256Fingerprint]
    /// SPKI hashes of an `addPins` batch that were already pinned (or repeated in the batch) and left alone.
    public var skipped: [SHA256Fingerprint]
    /// Pins already present that gained a certificate hash (legacy `fp`) or their key in an `addPins` batch.
    public var upgraded: [SHA256Fingerprint]
    /// The host's number of pins after the change.
    public var pinCount: Int
    /// The customer's content version after the change.
    public var version: Int64

    public init(customer: CustomerName, hostname: Hostname, changed: [SHA256Fingerprint], skipped: [SHA256Fingerprint], pinCount: Int, version: Int64, upgraded: [SHA256Fingerprint] = []) {
        self.customer = customer
        self.hostname = hostname
        self.changed = changed
        self.skipped = skipped
        self.pinCount = pinCount
        self.version = version
        self.upgraded = upgraded
    }

    /// Whether the host is left with fewer pins than TrustKit, HPKP and Android require for a backup.
    public var lacksBackupPin: Bool { pinCount < HostPins.minimumRecommendedPins }
}
