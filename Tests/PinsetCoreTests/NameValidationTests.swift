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
