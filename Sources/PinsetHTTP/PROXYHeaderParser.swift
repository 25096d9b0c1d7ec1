import Foundation

/// Parses the PROXY protocol header (haproxy's proxy-protocol.txt, v1 text and v2 binary) at the start of a
/// connection. Pure: bytes in, a header and its length out.
///
/// Behaviour under hostile input: the header is all-or-nothing. Anything that is neither a v1 line (at most
/// 107 bytes, `PROXY TCP4|TCP6|UNKNOWN ...\r\n`, addresses and ports checked for syntax) nor a v2 block (the 12-byte
/// signature, version 2, command LOCAL or PROXY, at most ``maxV2Length`` bytes of addresses and TLVs) is refused,
/// so a listener that requires the protocol never mistakes client bytes for a header. A caller accumulates the
/// first bytes of the connection and calls ``parse(_:)`` after each read; it needs at most 16 + ``maxV2Length``
/// bytes. TLVs are skipped.
public enum PROXYHeaderParser {
    public enum Result: Sendable, Equatable {
        /// Need more bytes.
        case incomplete
        /// The header and how many bytes it took; the rest belongs to the client's protocol.
        case header(PROXYHeader, length: Int)
        /// Not a valid header; the reason, for logs.
        case invalid(String)
    }

    /// Longest v1 line, CRLF included (proxy-protocol.txt §2.1).
    public static let maxV1Length = 107
    /// Longest v2 address and TLV block accepted; haproxy's own headers are far shorter.
    public static let maxV2Length = 2048
    static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]

    public static func parse(_ bytes: some Collection<UInt8>) -> Result {
        let bytes = Array(bytes.prefix(16 + maxV2Length))
        let v1Prefix = Array("PROXY ".utf8)
        let probe = min(bytes.count, 12)
        if bytes[..<min(bytes.count, 6)].elementsEqual(v1Prefix.prefix(min(bytes.count, 6))) {
            return parseV1(bytes)
        }
        guard bytes[..<probe].elementsEqual(v2Signature.prefix(probe)) else {
            return .invalid("the connection does not start with a PROXY protocol header")
        }
        return parseV2(bytes)
    }

    // MARK: - Version 1

    private static func parseV1(_ bytes: [UInt8]) -> Result {
        guard let lf = bytes.prefix(maxV1Length).firstIndex(of: 0x0A) else {
            return bytes.count >= maxV1Length ? .invalid("PROXY v1 line longer than \(maxV1Length) bytes") : .incomplete
        }
        guard lf > 0, bytes[lf - 1] == 0x0D else { return .invalid("PROXY v1 line does not end in CRLF") }
        let line = String(decoding: bytes[6..<(lf - 1)], as: UTF8.self)
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard let family = fields.first else { return .invalid("PROXY v1 line without a protocol") }
        switch family {
        case "UNKNOWN":
            return .header(PROXYHeader(version: 1, source: nil, destination: nil), length: lf + 1)
        case "TCP4", "TCP6":
            guard fields.count == 5 else { return .invalid("PROXY v1 \(family) line needs 4 fields, has \(fields.count - 1)") }
            let isV4 = family == "TCP4"
            guard let source = isV4 ? ipv4Text(fields[1]) : ipv6Text(fields[1]),
                  let destination = isV4 ? ipv4Text(fields[2]) : ipv6Text(fields[2])
            else { return .invalid("PROXY v1 line with a malformed \(isV4 ? "IPv4" : "IPv6") address") }
            guard let sourcePort = port(fields[3]), let destinationPort = port(fields[4]) else {
                return .invalid("PROXY v1 line with a malformed port")
            }
            return .header(PROXYHeader(version: 1, source: .init(host: source, port: sourcePort),
                                       destination: .init(host: destination, port: destinationPort)),
                           length: lf + 1)
        default:
            return .invalid("PROXY v1 line with unknown protocol")
        }
    }

    /// Dotted quad, each part 0...255 without leading zeros.
    private static func ipv4Text(_ text: Substring) -> String? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        for part in parts {
            guard (1...3).contains(part.count), part.utf8.allSatisfy(HTTPSyntax.isDigit),
                  part.count == 1 || part.first != "0", let value = Int(part), value <= 255
            else { return nil }
        }
        return String(text)
    }

    /// IPv6 text: hex groups and colons (with an optional dotted IPv4 tail), checked by parsing; returned in
    /// RFC 5952 form so that one client always has one key in per-address limits.
    private static func ipv6Text(_ text: Substring) -> String? {
        guard text.utf8.count <= 45 else { return nil }
        var groups: [UInt16] = []
        var text = text
        if let lastColon = text.lastIndex(of: ":"), text[text.index(after: lastColon)...].contains(".") {
            guard let tail = ipv4Text(text[text.index(after: lastColon)...]) else { return nil }
            let octets = tail.split(separator: ".").map { UInt16($0)! }
            text = text[...lastColon] + "\(String(octets[0] << 8 | octets[1], radix: 16)):\(String(octets[2] << 8 | octets[3], radix: 16))"
        }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groupsOf(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), group.utf8.allSatisfy(HTTPSyntax.isHexDigit),
                      let value = UInt16(group, radix: 16)
                else { return nil }
                result.append(value)
            }
            return result
        }
        guard let head = groupsOf(halves[0]) else { return nil }
        if halves.count == 2 {
            guard let tail = groupsOf(halves[1]), head.count + tail.count <= 7 else { return nil }
            groups = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard head.count == 8 else { return nil }
            groups = head
        }
        return formatIPv6(groups)
    }

    private static func port(_ text: Substring) -> UInt16? {
        guard (1...5).contains(text.count), text.utf8.allSatisfy(HTTPSyntax.isDigit),
              text.count == 1 || text.first != "0"
        else { return nil }
        return UInt16(text)
    }

    // MARK: - Version 2

    private static func parseV2(_ bytes: [UInt8]) -> Result {
        guard bytes.count >= 16 else { return .incomplete }
        let versionCommand = bytes[12]
        guard versionCommand >> 4 == 2 else { return .invalid("PROXY v2 header with version \(versionCommand >> 4)") }
        let command = versionCommand & 0x0F
        guard command <= 1 else { return .invalid("PROXY v2 header with unknown command \(command)") }
        let family = bytes[13]
        let length = Int(bytes[14]) << 8 | Int(bytes[15])
        guard length <= maxV2Length else { return .invalid("PROXY v2 header of \(length) bytes, more than \(maxV2Length)") }
        guard bytes.count >= 16 + length else { return .incomplete }
        let total = 16 + length
        // LOCAL: the balancer speaks for itself (health checks); the block is ignored.
        guard command == 1 else { return .header(PROXYHeader(version: 2, source: nil, destination: nil), length: total) }
        let block = bytes[16..<total]
        switch family {
        case 0x11: // TCP over IPv4
            guard length >= 12 else { return .invalid("PROXY v2 TCP4 header with \(length) address bytes, needs 12") }
            let b = Array(block.prefix(12))
            let source = b[0..<4].map(String.init).joined(separator: ".")
            let destination = b[4..<8].map(String.init).joined(separator: ".")
            return .header(PROXYHeader(version: 2, source: .init(host: source, port: UInt16(b[8]) << 8 | UInt16(b[9])),
                                       destination: .init(host: destination, port: UInt16(b[10]) << 8 | UInt16(b[11]))),
                           length: total)
        case 0x21: // TCP over IPv6
            guard length >= 36 else { return .invalid("PROXY v2 TCP6 header with \(length) address bytes, needs 36") }
            let b = Array(block.prefix(36))
            func groups(_ start: Int) -> [UInt16] { (0..<8).map { UInt16(b[start + 2 * $0]) << 8 | UInt16(b[start + 2 * $0 + 1]) } }
            return .header(PROXYHeader(version: 2, source: .init(host: formatIPv6(groups(0)), port: UInt16(b[32]) << 8 | UInt16(b[33])),
                                       destination: .init(host: formatIPv6(groups(16)), port: UInt16(b[34]) << 8 | UInt16(b[35]))),
                           length: total)
        default:
            // UNSPEC, UDP or UNIX: no TCP client address to use; the socket's address stands.
            return .header(PROXYHeader(version: 2, source: nil, destination: nil), length: total)
        }
    }

    /// RFC 5952: lowercase, no leading zeros, the longest run of two or more zero groups (the first of equal
    /// runs) as `::`. An IPv4-mapped address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) is the IPv4 client a balancer
    /// reached over a dual-stack socket, so it is given as `a.b.c.d`: one client, one key in per-address limits,
    /// whether the balancer wrote `TCP4` or `TCP6`.
    static func formatIPv6(_ groups: [UInt16]) -> String {
        if groups[0..<5].allSatisfy({ $0 == 0 }) && groups[5] == 0xFFFF {
            return "\(groups[6] >> 8).\(groups[6] & 0xFF).\(groups[7] >> 8).\(groups[7] & 0xFF)"
        }
        var bestStart = -1, bestLength = 0, index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > bestLength && end - index >= 2 { bestStart = index; bestLength = end - index }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestStart >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<bestStart].joined(separator: ":")
        let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
        return head + "::" + tail
    }
}
