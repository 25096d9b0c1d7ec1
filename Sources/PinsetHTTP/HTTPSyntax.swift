/// Byte classes of the HTTP grammar, as branch-only functions so the parser never allocates to classify input.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// `tchar` of RFC 9110 §5.6.2.
    @inline(__always)
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte allowed in a field value: VCHAR, SP, HTAB and obs-text (RFC 9110 §5.5). CR, LF, NUL, the other
    /// controls and DEL are rejected because they enable response splitting and request smuggling.
    @inline(__always)
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// `OWS` of RFC 9110 §5.6.3.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// A byte of an origin-form target other than `%`: `pchar`, `/` and `?` (RFC 3986 §3.3, §3.4).
    @inline(__always)
    static func isTargetCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"),
             UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            true
        default:
            false
        }
    }

    /// A byte of `uri-host [ ":" port ]` (RFC 3986 §3.2.2): reg-name, IP literal brackets, pct-encoding and port.
    @inline(__always)
    static func isHostCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "%"): true
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "@"): false
        default: isTargetCharacter(byte)
        }
    }

    @inline(__always)
    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }

    @inline(__always)
    static func isAlpha(_ byte: UInt8) -> Bool { byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z") }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// ASCII case-insensitive comparison of `bytes` with a lowercase literal. Only meaningful for token bytes, where
    /// setting bit 0x20 maps exactly the upper-case letters onto the lower-case ones.
    @inline(__always)
    static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            for index in 0..<expected.count where bytes[index] | 0x20 != expected[index] {
                return false
            }
            return true
        }
    }
}
