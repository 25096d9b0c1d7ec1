import Foundation
import PinsetLiveCheck
import PinsetServer
import Testing

/// Where the server's live-chain checks may connect: every special-purpose address (IPv4, IPv6, IPv4 carried in
/// IPv6) is refused unless the configuration allows its block, and the configuration's blocks are read strictly.
struct OutboundAddressPolicyTests {
    func refusal(_ address: String, allowing ranges: [String] = []) throws -> String? {
        let ip = try #require(IPAddress(address), "\(address) parses")
        return try OutboundAddressPolicy(allowing: ranges).refusal(of: ip)
    }

    @Test func specialPurposeIPv4BlocksAreRefusedAtTheirEdges() throws {
        let refused: [(String, String)] = [
            ("0.0.0.0", "unspecified"), ("10.0.0.0", "private"), ("10.255.255.255", "private"), ("100.64.0.0", "CGNAT"),
            ("100.127.255.255", "CGNAT"), ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"), ("169.254.169.254", "link-local"),
            ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.0.0.8", "IETF protocol assignments"),
            ("192.0.2.1", "TEST-NET-1"), ("192.88.99.1", "6to4 relay"), ("192.168.1.1", "private"), ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"), ("198.51.100.7", "TEST-NET-2"), ("203.0.113.9", "TEST-NET-3"), ("224.0.0.1", "multicast"),
            ("239.255.255.255", "multicast"), ("240.0.0.1", "reserved"), ("255.255.255.255", "limited broadcast"),
        ]
        for (address, kind) in refused {
            let reason = try refusal(address)
            #expect(reason?.contains(kind) == true, "\(address): \(reason ?? "permitted")")
        }
        for address in ["1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
                        "172.15.255.255", "172.32.0.0", "192.0.1.255", "192.167.255.255", "198.17.255.255", "198.20.0.0", "223.255.255.255"] {
            #expect(try refusal(address) == nil, "\(address) is a public address")
        }
    }

    @Test func specialPurposeIPv6BlocksAreRefused() throws {
        let refused: [(String, String)] = [
            ("::", "unspecified"), ("::1", "loopback"), ("::127.0.0.1", "IPv4-compatible"), ("64:ff9b:1::1", "local-use"),
            ("100::1", "discard-only"), ("2001::1", "IETF protocol assignments"), ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"), ("5f00::1", "segment routing"), ("fc00::1", "unique local"), ("fd12:3456::1", "unique local"),
            ("fe80::1", "link-local"), ("fec0::1", "site-local"), ("ff02::1", "multicast"), ("4000::1", "outside 2000::/3"),
        ]
        for (address, kind) in refused {
            let reason = try refusal(address)
            #expect(reason?.contains(kind) == true, "\(address): \(reason ?? "permitted")")
        }
        for address in ["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450::1", "3ffe::1"] {
            #expect(try refusal(address) == nil, "\(address) is a public address")
        }
    }

    /// An IPv6 address that carries an IPv4 address is judged by where the packets end up.
    @Test func ipv4CarriedInIPv6IsJudgedAsIPv4() throws {
        #expect(try refusal("::ffff:127.0.0.1")?.contains("IPv4-mapped loopback") == true)
        #expect(try refusal("::ffff:10.1.2.3")?.contains("private") == true)
        #expect(try refusal("::ffff:8.8.8.8") == nil)
        #expect(try refusal("64:ff9b::7f00:1")?.contains("NAT64") == true)
        #expect(try refusal("64:ff9b::a00:1")?.contains("private") == true)
        #expect(try refusal("64:ff9b::808:808") == nil)
        #expect(try refusal("2002:7f00:1::1")?.contains("6to4") == true)
        #expect(try refusal("2002:c0a8:101::1")?.contains("private") == true)
        #expect(try refusal("2002:808:808::1") == nil)
    }

    @Test func allowedBlocksPermitTheirAddressesOnly() throws {
        let allowed = ["127.0.0.0/8", "10.0.0.0/8", "fd00::/8"]
        #expect(try refusal("127.0.0.1", allowing: allowed) == nil)
        #expect(try refusal("127.1.2.3", allowing: allowed) == nil)
        #expect(try refusal("::ffff:127.0.0.1", allowing: allowed) == nil, "a mapped address is matched as the IPv4 address it carries")
        #expect(try refusal("10.200.0.1", allowing: allowed) == nil)
        #expect(try refusal("fd12::1", allowing: allowed) == nil)
        #expect(try refusal("::1", allowing: allowed)?.contains("loopback") == true, "IPv6 loopback is another block")
        #expect(try refusal("fc00::1", allowing: allowed)?.contains("unique local") == true)
        #expect(try refusal("192.168.0.1", allowing: allowed)?.contains("private") == true)
        #expect(try refusal("169.254.169.254", allowing: ["169.254.169.254"]) == nil, "a bare address allows itself")
        #expect(try refusal("169.254.169.253", allowing: ["169.254.169.254"]) != nil)
        #expect(try refusal("::1", allowing: ["::1"]) == nil)
        #expect(try refusal("127.0.0.1", allowing: ["0.0.0.0/0"]) == nil)
    }

    @Test func rangesAreParsedStrictly() throws {
        #expect(try IPAddressRange(parsing: "10.0.0.0/8").description == "10.0.0.0/8")
        #expect(try IPAddressRange(parsing: "127.0.0.1").description == "127.0.0.1/32")
        #expect(try IPAddressRange(parsing: "FD00::/8").description == "fd00::/8")
        #expect(try IPAddressRange(parsing: "::1").description == "::1/128")
        let refused: [(String, String)] = [
            ("10.0.0.1/8", "10.0.0.0/8"), ("fd00::1/8", "fd00::/8"), ("10.0.0.0/33", "from 0 to 32"), ("fd00::/129", "from 0 to 128"),
            ("10.0.0.0/", "prefix length"), ("10.0.0.0/+8", "prefix length"), ("10.0.0.0/8/8", "not an address range"),
            ("/8", "not an address range"), ("localhost/8", "not an address range"), ("10.0.0/8", "not an address range"),
            (" 10.0.0.0/8", "not an address range"), ("::ffff:127.0.0.0/104", "IPv4 range"), ("", "not an address range"),
        ]
        for (text, expected) in refused {
            #expect(throws: LiveChainError.self, "\(text)") { try IPAddressRange(parsing: text) }
            do {
                _ = try IPAddressRange(parsing: text)
            } catch {
                #expect(error.description.contains(expected) && error.kind == .invalidInput, "\(text): \(error)")
            }
        }
    }

    func parse(_ json: String) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration.parse(Data(json.utf8), origin: "test.json")
    }

    @Test func theConfigurationNamesItsAllowedBlocks() throws {
        #expect(try parse(#"{"monitoring": {}}"#).monitoring?.allowedAddresses == [])
        #expect(try parse(#"{"monitoring": {"allowedAddresses": null}}"#).monitoring?.allowedAddresses == [])
        let monitoring = try #require(try parse(#"{"monitoring": {"allowedAddresses": ["127.0.0.0/8", "10.0.0.0/8", "fd00::/8"]}}"#).monitoring)
        #expect(monitoring.allowedAddresses.map(\.description) == ["127.0.0.0/8", "10.0.0.0/8", "fd00::/8"])
        #expect(monitoring.addressPolicy.refusal(of: try #require(IPAddress("10.9.8.7"))) == nil)
        #expect(monitoring.addressPolicy.refusal(of: try #require(IPAddress("192.168.0.1"))) != nil)
        let mistakes: [(String, String)] = [
            (#"{"allowedAddresses": "127.0.0.0/8"}"#, "'allowedAddresses' must be a list of address blocks"),
            (#"{"allowedAddresses": ["127.0.0.0/8", 10]}"#, "'allowedAddresses' entry 2 must be a string"),
            (#"{"allowedAddresses": ["127.0.0.0/8", "10.0.0.1/8"]}"#, "'allowedAddresses' entry 2: '10.0.0.1/8' has address bits set beyond its /8 prefix; write the block's first address, 10.0.0.0/8"),
            (#"{"allowedAddresses": ["loopback"]}"#, "'allowedAddresses' entry 1: 'loopback' is not an address range"),
        ]
        for (monitoring, expected) in mistakes {
            do {
                _ = try parse(#"{"monitoring": \#(monitoring)}"#)
                Issue.record("\(monitoring) was accepted")
            } catch {
                #expect(error.message.contains("test.json: 'monitoring': \(expected)"), "\(error.message)")
            }
        }
    }

    @Test func theLiveCheckBudgetIsConfiguredUnderTheAPI() throws {
        #expect(try parse(#"{"api": {"port": 9443}}"#).api?.liveChecksPerAdminPerMinute == 30)
        #expect(try parse(#"{"api": {"port": 9443, "liveChecksPerAdminPerMinute": 5}}"#).api?.liveChecksPerAdminPerMinute == 5)
        for value in ["0", "1001", "2.5", "\"5\""] {
            #expect(throws: ConfigurationError.self) { try parse(#"{"api": {"port": 9443, "liveChecksPerAdminPerMinute": \#(value)}}"#) }
        }
    }
}
