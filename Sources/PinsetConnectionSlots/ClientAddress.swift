#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The unit a client's address is counted in, wherever a listener that must stay reachable counts clients: the admin
/// listener's failed authentications and open connections, and a witness's connections.
public enum ClientAddress {
    /// An IPv4 address as it is, an IPv6 address by its /64 (the block one subscriber is usually given, so that
    /// rotating through one's own block buys nothing), an IPv4-mapped IPv6 address, or one of NAT64's well-known
    /// prefix, as its IPv4 address.
    public static func key(for address: String) -> String {
        // The common case, an IPv4 address, without parsing: every accepted connection asks.
        guard address.utf8.contains(UInt8(ascii: ":")) else { return address }
        var bytes = [UInt8](repeating: 0, count: 16)
        let parsed = address.withCString { inet_pton(AF_INET6, $0, &bytes) }
        guard parsed == 1 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        // NAT64's well-known prefix (64:ff9b::/96, RFC 6052): IPv4 clients of an IPv6-only server, each its own
        // client by the IPv4 address it carries, not one /64 for all of them.
        if bytes[0..<12].elementsEqual([0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]) {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/64"
    }
}
