/// Which addresses the server may connect to when it checks a host's live chain. Host names are chosen by admins,
/// so without a rule an admin could make the server probe its own network: every address that is not a public
/// unicast address (loopback, private, link-local, shared CGNAT space, documentation and benchmarking blocks,
/// multicast, broadcast and the other blocks of the IANA special-purpose registries) is refused unless the
/// deployment allows its block in `allowed`. An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
public struct OutboundAddressPolicy: Sendable, Hashable {
    /// Blocks the deployment allows although they are special-purpose (tests, private PKIs, internal hosts).
    public var allowed: [IPAddressRange]

    public init(allowed: [IPAddressRange] = []) {
        self.allowed = allowed
    }

    /// - Throws: `LiveChainError` naming the entry that is not a CIDR block.
    public init(allowing ranges: [String]) throws(LiveChainError) {
        var allowed: [IPAddressRange] = []
        for text in ranges { allowed.append(try IPAddressRange(parsing: text)) }
        self.allowed = allowed
    }

    /// Why `address` may not be connected to, or nil when it may.
    public func refusal(of address: IPAddress) -> String? {
        let judged = address.mappedIPv4 ?? address
        guard let kind = Self.specialPurpose(of: address) else { return nil }
        if allowed.contains(where: { $0.contains(judged) || $0.contains(address) }) { return nil }
        return kind
    }

    /// The special-purpose block `address` lies in, as words for an error message ("loopback (127.0.0.0/8)"), or
    /// nil for a public unicast address.
    public static func specialPurpose(of address: IPAddress) -> String? {
        if let mapped = address.mappedIPv4 { return specialPurpose(of: mapped).map { "IPv4-mapped \($0)" } }
        if address.isIPv4 {
            return ipv4Blocks.first { $0.range.contains(address) }.map { "\($0.name) (\($0.range))" }
        }
        // Addresses that carry an IPv4 address the packets end up at: NAT64 (RFC 6052) and 6to4 (RFC 3056).
        if nat64.contains(address), let embedded = specialPurpose(of: IPAddress(bytes: Array(address.bytes[12...]))) {
            return "NAT64 address (\(nat64)) of a \(embedded) address"
        }
        if sixToFour.contains(address), let embedded = specialPurpose(of: IPAddress(bytes: Array(address.bytes[2..<6]))) {
            return "6to4 address (\(sixToFour)) of a \(embedded) address"
        }
        if nat64.contains(address) || sixToFour.contains(address) { return nil }
        if let block = ipv6Blocks.first(where: { $0.range.contains(address) }) { return "\(block.name) (\(block.range))" }
        return globalUnicast.contains(address) ? nil : "not global unicast (outside \(globalUnicast))"
    }

    private struct Block: Sendable {
        let range: IPAddressRange
        let name: String

        init(_ range: String, _ name: String) {
            self.range = IPAddressRange(range)
            self.name = name
        }
    }

    /// The IANA IPv4 Special-Purpose Address Registry's blocks that are not globally reachable, with multicast and
    /// the reserved class E; the more specific block first.
    private static let ipv4Blocks: [Block] = [
        Block("0.0.0.0/8", "unspecified, 'this network'"),
        Block("10.0.0.0/8", "private (RFC 1918)"),
        Block("100.64.0.0/10", "shared address space (CGNAT, RFC 6598)"),
        Block("127.0.0.0/8", "loopback"),
        Block("169.254.0.0/16", "link-local"),
        Block("172.16.0.0/12", "private (RFC 1918)"),
        Block("192.0.0.0/24", "IETF protocol assignments"),
        Block("192.0.2.0/24", "documentation (TEST-NET-1)"),
        Block("192.88.99.0/24", "6to4 relay anycast (deprecated)"),
        Block("192.168.0.0/16", "private (RFC 1918)"),
        Block("198.18.0.0/15", "benchmarking"),
        Block("198.51.100.0/24", "documentation (TEST-NET-2)"),
        Block("203.0.113.0/24", "documentation (TEST-NET-3)"),
        Block("224.0.0.0/4", "multicast"),
        Block("255.255.255.255/32", "limited broadcast"),
        Block("240.0.0.0/4", "reserved"),
    ]

    private static let nat64 = IPAddressRange("64:ff9b::/96")
    private static let sixToFour = IPAddressRange("2002::/16")
    private static let globalUnicast = IPAddressRange("2000::/3")

    /// The IANA IPv6 Special-Purpose Address Registry's blocks that are not globally reachable, and the other
    /// blocks outside global unicast named for a clearer message.
    private static let ipv6Blocks: [Block] = [
        Block("::/128", "unspecified"),
        Block("::1/128", "loopback"),
        Block("::/96", "IPv4-compatible (deprecated)"),
        Block("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
        Block("100::/64", "discard-only"),
        Block("2001:db8::/32", "documentation"),
        Block("2001::/23", "IETF protocol assignments"),
        Block("3fff::/20", "documentation"),
        Block("5f00::/16", "segment routing (SRv6) SIDs"),
        Block("fc00::/7", "unique local (ULA)"),
        Block("fe80::/10", "link-local"),
        Block("fec0::/10", "site-local (deprecated)"),
        Block("ff00::/8", "multicast"),
    ]
}
