import PinsetCore
import Testing

struct NameValidationTests {
    @Test(arguments: ["acme", "Acme-Corp_2", "a.b", "0day"])
    func acceptsCustomerNames(_ name: String) throws {
        #expect(try CustomerName(name).rawValue == name)
    }

    @Test(arguments: ["", "../x", "a/b", ".hidden", "-x", "a b", "a%2f", String(repeating: "a", count: 65), "é"])
    func rejectsCustomerNames(_ name: String) {
        #expect(throws: InputError.self) { try CustomerName(name) }
    }

    @Test func parsesBundlePaths() throws {
        #expect(CustomerName(bundlePath: "/acme.json.signed") == (try CustomerName("acme")))
        #expect(CustomerName(bundlePath: "/../acme.json.signed") == nil)
        #expect(CustomerName(bundlePath: "/acme.json") == nil)
        #expect(CustomerName(bundlePath: "/a/b.json.signed") == nil)
        #expect(CustomerName(bundlePath: "/.json.signed") == nil)
    }

    @Test func normalizesHostnames() throws {
        #expect(try Hostname("API.Example.COM.").rawValue == "api.example.com")
        #expect(try Hostname("a.b.example.com").isWithin(try Hostname("example.com")))
        #expect(!(try Hostname("badexample.com").isWithin(try Hostname("example.com"))))
    }

    @Test(arguments: ["", "*.example.com", "a..b", "-a.com", "a_b.com", "exa mple.com", String(repeating: "a", count: 64) + ".com"])
    func rejectsHostnames(_ name: String) {
        #expect(throws: InputError.self) { try Hostname(name) }
    }

    /// Lower-casing maps U+212A KELVIN SIGN to "k" and U+0130 to "i" plus a combining dot: a name holding them
    /// must be refused as given, not validated in its lower-cased form.
    @Test(arguments: ["\u{212A}.example.com", "api.\u{212A}.example.com", "\u{0130}.example.com", "KELVIN\u{212A}.example.com"])
    func rejectsNonASCIIThatLowerCasesToASCII(_ name: String) {
        let error = #expect(throws: InputError.self) { try Hostname(name) }
        #expect(error?.description.contains("non-ASCII") == true)
    }

    /// A new host is a DNS name or an IPv4 address as four decimal numbers; the notations resolvers also read as an
    /// address, and names whose last label is all digits, are refused where hosts are added.
    @Test func newHostsAreNamesOrAddressesInTheirUsualForm() throws {
        for name in ["api.example.com", "192.0.2.10", "10.0.0.1", "0.0.0.0", "255.255.255.255", "cafe", "0day.example", "0x.example.com", "1.2.3.example"] {
            #expect(throws: Never.self, "\(name)") { try Hostname(name).requireNameOrAddress() }
        }
        #expect(try Hostname("192.0.2.10").isIPv4Address && !Hostname("192.0.2.010").isIPv4Address && !Hostname("api.example.com").isIPv4Address)
        for name in ["999.1.2.3", "1.2.3", "127.1", "0x7f000001", "0177.0.0.1", "2130706433", "192.0.2.010", "1.2.3.4.5", "host.123"] {
            let error = #expect(throws: InputError.self, "\(name)") { try Hostname(name).requireNameOrAddress() }
            #expect(error?.message.contains("Nothing was changed") == true)
        }
    }

    /// The mistakes people make with hashes are named: a hex digest is not base64.
    @Test func aHexDigestGivenAsAPinIsNamedWithTheConversion() {
        let hex = String(repeating: "ab", count: 32)
        let error = #expect(throws: InputError.self) { try SHA256Fingerprint(base64: hex) }
        #expect(error?.message.contains("in hex") == true && error?.message.contains("xxd -r -p | base64") == true, "\(String(describing: error))")
    }

    @Test func parsesPinHashes() throws {
        let bytes = (0..<32).map { UInt8($0) }
        let base64 = Base64.encode(bytes)
        #expect(try SHA256Fingerprint(base64: base64).bytes == bytes)
        #expect(try SHA256Fingerprint(base64: "sha256/" + base64).bytes == bytes)
        #expect(try SHA256Fingerprint(hex: Hex.encode(bytes).uppercased()).bytes == bytes)
        #expect(throws: InputError.self) { try SHA256Fingerprint(base64: "not base64!") }
        #expect(throws: InputError.self) { try SHA256Fingerprint(base64: Base64.encode(Array(bytes.prefix(20)))) }
        #expect(throws: InputError.self) { try SHA256Fingerprint(base64: String(base64.dropLast())) }
    }
}

/// The request-path parser and the validating initializer must agree on every name.
struct BundlePathAgreementTests {
    @Test(arguments: ["acme", "A.b-c_d", "0", String(repeating: "a", count: 64), String(repeating: "a", count: 65),
                      "", ".x", "-x", "a/b", "a%2e", "é", "a b", "..", "a\u{0}b"])
    func pathParserAgreesWithValidation(_ name: String) {
        let fromPath = CustomerName(bundlePath: "/\(name).json.signed")
        let validated = try? CustomerName(name)
        #expect(fromPath == validated)
    }
}
