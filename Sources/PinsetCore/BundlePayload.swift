import Foundation

/// The JSON document inside a signed bundle.
///
/// The legacy keys (`customer`, `timestamp`, `hashes[].hostname/port/fp/pk`) are byte-for-byte what
/// GCXTrustPolicy online-pinning clients parse; they crash on a missing key or a wrong type, so every one is
/// always written, arrays even when empty. Pinset's own keys (`format`, `version`, `expires`,
/// `hashes[].pin-sha256`, `hashes[].include-subdomains`, `hashes[].report-only-until`, `signers-not-before`) are ignored by those clients. See
/// docs/bundle-format.md.
public struct BundlePayload: Hashable, Sendable {
    public static let currentFormat = 1

    public var customer: CustomerName
    /// Unix seconds at signing. Legacy clients accept a bundle only while `timestamp + 600 >= now`.
    public var timestamp: Int64
    /// Unix seconds after which Pinset clients refuse the bundle.
    public var expires: Int64
    /// The customer's content version: monotonic, bumped by every change to hosts or pins.
    public var version: Int64
    /// Sorted by host name; one entry per host name. A decoded payload may hold entries without pins (legacy
    /// signers write them); `encoded()` and `encodedHosts(_:)` never publish those, see `publishedHosts`.
    public var hosts: [PinnedHost]
    /// The revocation floor (Unix seconds), or `nil` when none is set: Pinset clients that accepted a bundle
    /// with a floor refuse bundles whose signer certificate's notBefore is earlier than the highest floor they
    /// have seen. Written only when set, so bundles without one keep their bytes and digests.
    public var signersNotBefore: Int64?

    public init(customer: CustomerName, timestamp: Int64, expires: Int64, version: Int64, hosts: [PinnedHost], signersNotBefore: Int64? = nil) {
        self.customer = customer
        self.timestamp = timestamp
        self.expires = expires
        self.version = version
        self.hosts = hosts.sorted { $0.hostname < $1.hostname }
        self.signersNotBefore = signersNotBefore
    }

    public init(pinSet: PinSet, timestamp: Int64, expires: Int64) {
        self.init(
            customer: pinSet.customer,
            timestamp: timestamp,
            expires: expires,
            version: pinSet.version,
            hosts: Self.publishedHosts(of: pinSet),
            signersNotBefore: pinSet.signersNotBefore
        )
    }

    /// The hosts of `pinSet` that a bundle carries: those with at least one pin. A host without pins is not
    /// published at all — an entry without pins would shadow a covering include-subdomains parent, so an app
    /// that reads it as "not pinned" would accept any certificate for that host. Left out, the host is covered
    /// by its parent, if any, exactly as before it was added.
    public static func publishedHosts(of pinSet: PinSet) -> [PinnedHost] {
        pinSet.hosts.filter { !$0.pins.isEmpty }.map(PinnedHost.init)
    }

    /// `hosts` without the entries that list no pins: what `encoded()` writes.
    public var publishedHosts: [PinnedHost] { hosts.filter(\.hasPins) }

    /// SHA-256 over the content alone (customer, version, hosts, and the revocation floor when set), not the
    /// signing or expiry time: two
    /// bundles of one version must carry the same digest, or the later one is not genuine. Host names enter in
    /// their lower-case form, as `Hostname` compares them: payloads equal under `==` have equal digests, and a
    /// digest stored before bundles kept the operator's spelling still matches after an upgrade.
    public var contentDigest: SHA256Fingerprint {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("customer"); writer.string(customer.rawValue)
        writer.key("version"); writer.integer(version)
        writer.key("hashes"); Self.writeHosts(hosts, spelled: false, to: &writer)
        if let signersNotBefore { writer.key("signers-not-before"); writer.integer(signersNotBefore) }
        writer.endObject()
        return SHA256Fingerprint(of: writer.bytes)
    }

    /// The UTF-8 JSON that is signed. Deterministic: payloads equal in every field, host-name spelling included,
    /// encode to equal bytes (payloads equal under `==` may differ in host-name case). Entries without pins
    /// are left out, so this decodes to a payload whose `hosts` are this one's `publishedHosts`.
    public func encoded() -> [UInt8] {
        Self.encoded(
            customer: customer, timestamp: timestamp, expires: expires, version: version, encodedHosts: Self.encodedHosts(hosts),
            signersNotBefore: signersNotBefore
        )
    }

    /// The `hashes` array alone. It depends only on the pin content, so a signer may encode it once per
    /// content version and reuse it with every new timestamp. Hosts without pins are left out (see
    /// `publishedHosts(of:)`): every signing path goes through here, so none can publish one.
    public static func encodedHosts(_ hosts: [PinnedHost]) -> [UInt8] {
        var writer = JSONWriter()
        writeHosts(hosts.filter(\.hasPins).sorted { $0.hostname < $1.hostname }, spelled: true, to: &writer)
        return writer.bytes
    }

    /// The payload around an already encoded `hashes` array; `encoded()` is this with `encodedHosts(hosts)`.
    public static func encoded(
        customer: CustomerName, timestamp: Int64, expires: Int64, version: Int64, encodedHosts: [UInt8], signersNotBefore: Int64? = nil
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("customer"); writer.string(customer.rawValue)
        writer.key("timestamp"); writer.integer(timestamp)
        writer.key("hashes"); writer.rawValue(encodedHosts)
        writer.key("format"); writer.integer(Int64(Self.currentFormat))
        writer.key("version"); writer.integer(version)
        writer.key("expires"); writer.integer(expires)
        if let signersNotBefore { writer.key("signers-not-before"); writer.integer(signersNotBefore) }
        writer.endObject()
        return writer.bytes
    }

    /// `spelled`: the operator's spelling, which legacy clients compare byte for byte (the wire form), or the
    /// lower-case name (the digest form).
    private static func writeHosts(_ hosts: [PinnedHost], spelled: Bool, to writer: inout JSONWriter) {
        writer.beginArray()
        for host in hosts {
            writer.beginObject()
            writer.key("hostname"); writer.string(spelled ? host.hostname.spelling : host.hostname.rawValue)
            writer.key("port"); writer.string(String(host.port))
            writer.key("fp"); writer.stringArray(host.certificateSHA256.map(\.hex))
            writer.key("pk"); writer.stringArray(host.subjectPublicKeyInfos.map { Base64.encode($0) })
            writer.key("pin-sha256"); writer.stringArray(host.spkiSHA256.map(\.base64))
            writer.key("include-subdomains"); writer.bool(host.includeSubdomains)
            // Written only while a window is set, so that a bundle without one keeps its bytes and digest.
            if let until = host.reportOnlyUntil { writer.key("report-only-until"); writer.integer(until) }
            writer.endObject()
        }
        writer.endArray()
    }
}
