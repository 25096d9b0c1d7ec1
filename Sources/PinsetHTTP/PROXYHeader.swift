/// The connection details a load balancer sends ahead of the client's bytes with the PROXY protocol
/// (haproxy's proxy-protocol.txt, versions 1 and 2).
public struct PROXYHeader: Sendable, Equatable {
    /// An address and port as the balancer saw them; `host` is dotted IPv4 or RFC 5952 IPv6 text, and an
    /// IPv4-mapped IPv6 address is given as its IPv4 address.
    public struct Address: Sendable, Equatable {
        public var host: String
        public var port: UInt16

        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }
    }

    /// 1 (text) or 2 (binary).
    public var version: Int
    /// The real client; nil for a v2 `LOCAL` command (the balancer's own health check), a v1 `UNKNOWN` or a v2
    /// `UNSPEC`/non-TCP family, for which the socket's own address stands.
    public var source: Address?
    /// The address the client connected to; nil when `source` is.
    public var destination: Address?

    public init(version: Int, source: Address?, destination: Address?) {
        self.version = version
        self.source = source
        self.destination = destination
    }
}
