#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// An IPv4 or IPv6 address as its bytes in network order (4 or 16 of them).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// The address `text` spells (`192.0.2.1`, `2001:db8::1`), or nil when it is not an address.
    public init?(_ text: String) {
        var v4 = [UInt8](repeating: 0, count: 4)
        if text.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            bytes = v4
            return
        }
        var v6 = [UInt8](repeating: 0, count: 16)
        guard text.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 else { return nil }
        bytes = v6
    }

    init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16)
        self.bytes = bytes
    }

    /// The address of an IPv4 or IPv6 socket address; nil for a UNIX socket.
    init?(_ socketAddress: SocketAddress) {
        switch socketAddress {
        case .v4(let address):
            var raw = address.address.sin_addr
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        case .v6(let address):
            var raw = address.address.sin6_addr
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        default:
            return nil
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) carries: the one the kernel connects to.
    public var mappedIPv4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff else { return nil }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: 64)
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses in CIDR notation: `10.0.0.0/8`, `fd00::/8`; a bare address is the block of that address alone.
public struct IPAddressRange: Hashable, Sendable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    static let usage = "Write ranges in CIDR notation, such as 127.0.0.0/8, 10.0.0.0/8 or fd00::/8, or a single address."

    /// - Throws: `LiveChainError` saying what is wrong with `text` and how to write it.
    public init(parsing text: String) throws(LiveChainError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else {
            throw LiveChainError("'\(text)' is not an address range. \(Self.usage)", kind: .invalidInput)
        }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let parsed = Int(parts[1]), (0...maximum).contains(parsed) else {
                throw LiveChainError("'\(text)' has a prefix length that is not from 0 to \(maximum). \(Self.usage)", kind: .invalidInput)
            }
            length = parsed
        }
        let range = IPAddressRange(network: address, prefixLength: length)
        // A typo such as 10.0.0.1/8 would otherwise allow more (or other) addresses than the operator meant.
        guard range.masked(address) == address else {
            throw LiveChainError("'\(text)' has address bits set beyond its /\(length) prefix; write the block's first address, \(range.masked(address))/\(length).", kind: .invalidInput)
        }
        if address.mappedIPv4 != nil && length >= 96 {
            throw LiveChainError("'\(text)' is an IPv4-mapped IPv6 range; write it as the IPv4 range (such as 127.0.0.0/8): a mapped address is matched as the IPv4 address it carries.", kind: .invalidInput)
        }
        self = range
    }

    init(network: IPAddress, prefixLength: Int) {
        self.network = network
        self.prefixLength = prefixLength
    }

    init(_ literal: String) {
        do {
            self = try IPAddressRange(parsing: literal)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && masked(address) == network
    }

    private func masked(_ address: IPAddress) -> IPAddress {
        var bytes = address.bytes
        for index in bytes.indices {
            let kept = min(max(prefixLength - index * 8, 0), 8)
            bytes[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xff << (8 - kept))
        }
        return IPAddress(bytes: bytes)
    }

    public var description: String { "\(network)/\(prefixLength)" }
}
