import PinsetHTTP
import Testing

@Suite("PROXYHeaderParser")
struct PROXYHeaderParserTests {
    static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    static let request = Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8)

    /// haproxy `send-proxy-v2` for a TCP4 client 192.168.1.10:54321 connecting to 10.0.0.1:443.
    static let v2TCP4: [UInt8] = signature + [0x21, 0x11, 0x00, 0x0C, 192, 168, 1, 10, 10, 0, 0, 1, 0xD4, 0x31, 0x01, 0xBB]

    @Test func v2TCP4AsHAProxySendsIt() {
        let result = PROXYHeaderParser.parse(Self.v2TCP4 + Self.request)
        #expect(result == .header(PROXYHeader(version: 2, source: .init(host: "192.168.1.10", port: 54321),
                                              destination: .init(host: "10.0.0.1", port: 443)), length: 28))
    }

    @Test func v2TCP6WithATLVAsHAProxySendsIt() {
        // 2001:db8::1 port 40000 -> 2001:db8::2 port 8443, then a PP2_TYPE_ALPN TLV "h2" (skipped).
        let source: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]
        let destination: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [2]
        let tlv: [UInt8] = [0x01, 0x00, 0x02, UInt8(ascii: "h"), UInt8(ascii: "2")]
        let header = Self.signature + [0x21, 0x21, 0x00, UInt8(36 + tlv.count)] + source + destination
            + [0x9C, 0x40, 0x20, 0xFB] + tlv
        #expect(PROXYHeaderParser.parse(header + Self.request) == .header(
            PROXYHeader(version: 2, source: .init(host: "2001:db8::1", port: 40000),
                        destination: .init(host: "2001:db8::2", port: 8443)), length: 16 + 36 + 5))
    }

    @Test func v2LocalIsTheBalancersOwnHealthCheck() {
        let local = Self.signature + [0x20, 0x00, 0x00, 0x00]
        #expect(PROXYHeaderParser.parse(local + Self.request) == .header(PROXYHeader(version: 2, source: nil, destination: nil), length: 16))
    }

    @Test func v1AsNginxAndHAProxySendIt() {
        #expect(PROXYHeaderParser.parse(Array("PROXY TCP4 203.0.113.7 192.0.2.1 51000 8080\r\nGET".utf8)) == .header(
            PROXYHeader(version: 1, source: .init(host: "203.0.113.7", port: 51000),
                        destination: .init(host: "192.0.2.1", port: 8080)), length: 45))
        #expect(PROXYHeaderParser.parse(Array("PROXY TCP6 2001:DB8:0:0:0:0:0:1 ::ffff:192.0.2.1 1 65535\r\n".utf8)) == .header(
            PROXYHeader(version: 1, source: .init(host: "2001:db8::1", port: 1),
                        destination: .init(host: "192.0.2.1", port: 65535)), length: 58))
        #expect(PROXYHeaderParser.parse(Array("PROXY UNKNOWN\r\n".utf8)) == .header(PROXYHeader(version: 1, source: nil, destination: nil), length: 15))
    }

    @Test func anIPv4MappedAddressIsTheIPv4Client() {
        func source(_ header: [UInt8]) -> String? {
            guard case .header(let parsed, _) = PROXYHeaderParser.parse(header) else { return nil }
            return parsed.source?.host
        }
        #expect(source(Array("PROXY TCP4 203.0.113.7 192.0.2.1 1 2\r\n".utf8)) == "203.0.113.7")
        #expect(source(Array("PROXY TCP6 ::ffff:203.0.113.7 ::1 1 2\r\n".utf8)) == "203.0.113.7")
        #expect(source(Array("PROXY TCP6 0:0:0:0:0:FFFF:CB00:7107 ::1 1 2\r\n".utf8)) == "203.0.113.7")
        let v2: [UInt8] = Self.signature + [0x21, 0x21, 0x00, 36] + [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 203, 0, 113, 7]
            + [UInt8](repeating: 0, count: 15) + [1] + [0, 1, 0, 2]
        #expect(source(v2) == "203.0.113.7")
        // Not mapped: IPv4-compatible (deprecated) and NAT64 addresses stay IPv6.
        #expect(source(Array("PROXY TCP6 ::203.0.113.7 ::1 1 2\r\n".utf8)) == "::cb00:7107")
        #expect(source(Array("PROXY TCP6 64:ff9b::203.0.113.7 ::1 1 2\r\n".utf8)) == "64:ff9b::cb00:7107")
    }

    @Test func partialHeadersAskForMore() {
        for cut in [1, 5, 11, 12, 15, 27] {
            #expect(PROXYHeaderParser.parse(Self.v2TCP4.prefix(cut)) == .incomplete, "v2 cut at \(cut)")
        }
        let v1 = Array("PROXY TCP4 203.0.113.7 192.0.2.1 51000 8080\r\n".utf8)
        for cut in [1, 6, 20, v1.count - 1] {
            #expect(PROXYHeaderParser.parse(v1.prefix(cut)) == .incomplete, "v1 cut at \(cut)")
        }
    }

    @Test(arguments: [
        Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8),
        Array("PROXY TCP4 203.0.113.7 192.0.2.1 51000\r\n".utf8),
        Array("PROXY TCP4 203.0.113.256 192.0.2.1 1 2\r\n".utf8),
        Array("PROXY TCP4 203.0.113.07 192.0.2.1 1 2\r\n".utf8),
        Array("PROXY TCP4 203.0.113.7 192.0.2.1 1 65536\r\n".utf8),
        Array("PROXY TCP4 203.0.113.7  192.0.2.1 1 2\r\n".utf8),
        Array("PROXY TCP6 2001:db8::1::2 ::1 1 2\r\n".utf8),
        Array("PROXY TCP6 203.0.113.7 ::1 1 2\r\n".utf8),
        Array("PROXY TCP4 203.0.113.7 192.0.2.1 1 2\n".utf8),
        Array("PROXY UDP4 203.0.113.7 192.0.2.1 1 2\r\n".utf8),
        Array("PROXY TCP4 ".utf8) + [UInt8](repeating: UInt8(ascii: "1"), count: 120),
        signature + [0x11, 0x11, 0x00, 0x0C] + [UInt8](repeating: 0, count: 12),
        signature + [0x22, 0x11, 0x00, 0x0C] + [UInt8](repeating: 0, count: 12),
        signature + [0x21, 0x11, 0x00, 0x08] + [UInt8](repeating: 0, count: 8),
        signature + [0x21, 0x21, 0x00, 0x0C] + [UInt8](repeating: 0, count: 12),
        signature + [0x21, 0x11, 0xFF, 0xFF],
        [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0B, 0x21, 0x11, 0x00, 0x00],
    ])
    func invalidHeadersAreRefused(input: [UInt8]) {
        guard case .invalid = PROXYHeaderParser.parse(input) else {
            Issue.record("accepted \(input)")
            return
        }
    }
}
