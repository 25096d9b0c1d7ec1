#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a token may travel over plain HTTP: to this machine only. The server refuses to listen without TLS
/// elsewhere, and the client refuses to send a token in clear text elsewhere, by this one rule.
public enum LoopbackHost {
    /// `localhost` (any case), an address in 127.0.0.0/8, or `::1`. Only a literal address or that name: a name such
    /// as `127.db.example.com` is another host, and a bracketed `[::1]` is a URL's spelling, not an address.
    public static func contains(_ host: String) -> Bool {
        let address = host.lowercased()
        if address == "localhost" { return true }
        var v4 = in_addr()
        if address.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        guard address.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        return bytes == [UInt8](repeating: 0, count: 15) + [1]
    }
}
