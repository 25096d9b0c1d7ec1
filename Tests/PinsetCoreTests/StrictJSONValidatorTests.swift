import Foundation
import PinsetCore
import Testing

struct StrictJSONValidatorTests {
    private func refusal(_ bytes: [UInt8]) -> PayloadError? {
        do {
            _ = try StrictJSONValidator.validate(bytes)
            return nil
        } catch {
            return error
        }
    }

    private func refusal(_ text: String) -> PayloadError? { refusal(Array(text.utf8)) }

    @Test(arguments: [
        #"{}"#, #"[]"#, #" {"a" : [1, -0, 2.5e-3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]} "#,
        #"{"a":{"a":{"a":1}},"b":"é😀"}"#, "\t{\"\\u0061\":1,\"b\":2}\r\n",
    ])
    func acceptsValidJSON(_ text: String) {
        #expect(refusal(text) == nil)
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, ""),
        (#"{"hashes":[{"port":"443","port":"8443"}]}"#, "hashes[0]"),
        (#"{"a":1,"\u0061":2}"#, ""),
        (#"{"x":{"k":{},"k":[]}}"#, "x"),
    ])
    func refusesDuplicateKeysAtAnyDepth(_ text: String, path: String) throws {
        let error = try #require(refusal(text))
        #expect(error.path == path)
        #expect(error.reason.contains("more than once"))
    }

    /// Large objects switch from a linear scan to a set; a duplicate is found on either side of the switch.
    @Test(arguments: [3, 16, 17, 40])
    func findsDuplicatesInObjectsOfAnySize(members: Int) throws {
        let keys = (0..<members).map { "\"k\($0)\":\($0)" }
        #expect(refusal("{" + keys.joined(separator: ",") + "}") == nil)
        for duplicate in [0, members - 1] {
            let text = "{" + keys.joined(separator: ",") + ",\"k\(duplicate)\":0}"
            #expect(try #require(refusal(text)).reason.contains("\"k\(duplicate)\" appears more than once"))
        }
        // Equal names in sibling and nested objects are not duplicates.
        #expect(refusal("{\"a\":{" + keys.joined(separator: ",") + "},\"b\":{" + keys.joined(separator: ",") + "}}") == nil)
    }

    /// Foundation's decoder compares keys as Swift strings (canonical equivalence), other parsers by code
    /// points: keys equal only under canonical equivalence are refused too, in small and large objects.
    @Test(arguments: [0, 20])
    func refusesCanonicallyEquivalentKeys(otherMembers: Int) throws {
        let others = (0..<otherMembers).map { "\"k\($0)\":\($0)," }.joined()
        let kelvin = try #require(refusal("{" + others + "\"Key\":1,\"\u{212A}ey\":2}"))
        #expect(kelvin.reason.contains("canonical equivalence"))
        let accent = try #require(refusal("{" + others + "\"caf\u{E9}\":1,\"cafe\u{301}\":2}"))
        #expect(accent.reason.contains("canonical equivalence"))
        #expect(refusal("{" + others + "\"\u{212A}ey\":1,\"Kez\":2,\"caf\u{E9}\":3}") == nil)
    }

    @Test func reportsNumbersWithAFractionOrAnExponent() throws {
        let paths = try StrictJSONValidator.validate(Array(#"{"a":1,"b":1.0,"c":[2,1e2,-3E+1],"d":{"e":0.5}}"#.utf8))
        #expect(paths == ["b", "c[1]", "c[2]", "d.e"])
    }

    @Test func refusesAByteOrderMarkAndOtherEncodings() throws {
        let json = #"{"a":1}"#
        #expect(try #require(refusal([0xEF, 0xBB, 0xBF] + Array(json.utf8))).reason.contains("byte order mark"))
        var utf16LE: [UInt8] = [0xFF, 0xFE]
        var utf16BE: [UInt8] = []
        var utf16NoBOM: [UInt8] = []
        var utf32: [UInt8] = []
        for unit in json.utf16 {
            utf16LE += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            utf16BE += [UInt8(unit >> 8), UInt8(unit & 0xFF)]
            utf16NoBOM += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        for scalar in json.unicodeScalars { utf32 += [0, 0, 0, UInt8(scalar.value)] }
        #expect(try #require(refusal(utf16LE)).reason.contains("UTF-16"))
        #expect(try #require(refusal(utf16BE)).reason.contains("UTF-16"))
        #expect(try #require(refusal(utf16NoBOM)).reason.contains("UTF-16"))
        #expect(try #require(refusal(utf32)).reason.contains("UTF-32"))
        #expect(try #require(refusal([0x00, 0x00, 0xFE, 0xFF] + utf32)).reason.contains("UTF-32"))
    }

    @Test(arguments: [
        [0x22, 0xC0, 0xAF, 0x22],        // overlong '/'
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-8 encoded surrogate
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xE2, 0x82, 0x22],        // truncated
        [0x22, 0xFF, 0x22],
    ] as [[UInt8]])
    func refusesMalformedUTF8(_ bytes: [UInt8]) {
        #expect(refusal(bytes) != nil)
    }

    @Test(arguments: [
        "", " ", "{", #"{"a":1,}"#, "[1,]", "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[NaN]", "[Infinity]", "[tru]",
        #"{"a" 1}"#, #"{a:1}"#, "{} {}", "{}x", #"["\u12"]"#, #"["\x"]"#, #"["\ud800"]"#, #"["\udc00"]"#,
        #"["\ud800\u0041"]"#, "[\"a\u{01}\"]", "// c\n{}", "'a'",
    ])
    func refusesWhatTheGrammarDoesNotAllow(_ text: String) {
        #expect(refusal(text) != nil)
    }

    @Test func boundsTheNestingDepth() {
        let depth = StrictJSONValidator.maximumDepth
        #expect(refusal(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)) == nil)
        let tooDeep = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
        #expect(refusal(tooDeep)?.reason.contains("nested deeper") == true)
        // Far deeper input is refused at the bound, not by exhausting the stack.
        #expect(refusal(String(repeating: "[", count: 1_000_000)) != nil)
    }
}
