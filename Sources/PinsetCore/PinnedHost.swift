/// One host's entry as a bundle carries it: what a client needs to evaluate a TLS chain, nothing more.
///
/// Arrays are kept sorted and free of duplicates so that equal content has one encoding.
public struct PinnedHost: Hashable, Sendable {
    public var hostname: Hostname
    public var port: UInt16
    public var includeSubdomains: Bool
    /// SHA-256 of each pinned SubjectPublicKeyInfo (`pin-sha256`); every key in `subjectPublicKeyInfos` is here too.
    public var spkiSHA256: [SHA256Fingerprint]
    /// SHA-256 of whole pinned certificates (legacy `fp`).
    public var certificateSHA256: [SHA256Fingerprint]
    /// DER SubjectPublicKeyInfos of the pins whose key is known (legacy `pk`).
    public var subjectPublicKeyInfos: [[UInt8]]
    /// `report-only-until` (Unix seconds): Pinset clients treat the host as report-only while
    /// max(device clock, latest signed time) is earlier; `nil` (the key absent) means enforcing. Legacy GCX
    /// clients do not read it and keep enforcing the pins listed.
    public var reportOnlyUntil: Int64?

    public init(
        hostname: Hostname,
        port: UInt16,
        includeSubdomains: Bool,
        spkiSHA256: [SHA256Fingerprint],
        certificateSHA256: [SHA256Fingerprint],
        subjectPublicKeyInfos: [[UInt8]],
        reportOnlyUntil: Int64? = nil
    ) {
        self.reportOnlyUntil = reportOnlyUntil
        self.hostname = hostname
        self.port = port
        self.includeSubdomains = includeSubdomains
        self.spkiSHA256 = Array(Set(spkiSHA256)).sorted()
        self.certificateSHA256 = Array(Set(certificateSHA256)).sorted()
        self.subjectPublicKeyInfos = Array(Set(subjectPublicKeyInfos)).sorted { $0.lexicographicallyPrecedes($1) }
    }

    public init(_ host: HostPins) {
        self.init(
            hostname: host.hostname,
            port: host.port,
            includeSubdomains: host.includeSubdomains,
            spkiSHA256: host.pins.compactMap(\.spkiSHA256),
            certificateSHA256: host.pins.compactMap(\.certificateSHA256),
            subjectPublicKeyInfos: host.pins.compactMap(\.subjectPublicKeyInfo),
            reportOnlyUntil: host.reportOnlyUntil
        )
    }

    /// Whether the entry lists any pin. An entry without pins pins nothing: Pinset never publishes one, and a
    /// client skips one (a legacy signer may write it) in favour of a covering include-subdomains parent, or
    /// refuses the host; it never reads it as "this host is not pinned".
    public var hasPins: Bool { !spkiSHA256.isEmpty || !certificateSHA256.isEmpty }

    /// Whether the host is report-only at `time` (Unix seconds): a window that ends at or before `time` is over.
    public func isReportOnly(at time: Int64) -> Bool {
        guard let reportOnlyUntil else { return false }
        return time < reportOnlyUntil
    }

    /// Whether this entry applies to connections to `name`: the same host, or a subdomain when
    /// include-subdomains is set.
    public func covers(_ name: Hostname) -> Bool {
        name.isCovered(by: hostname, includeSubdomains: includeSubdomains)
    }
}
