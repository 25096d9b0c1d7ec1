/// A `Content-Type` value parsed as RFC 9110 §8.3.1 defines it: `type "/" subtype *( OWS ";" OWS [ parameter ] )`,
/// with type, subtype and parameter names compared without case, and parameter values as tokens or quoted strings.
struct MediaType: Equatable {
    /// Lowercased.
    let type: String
    /// Lowercased.
    let subtype: String
    /// Names lowercased, values as sent (quoted strings unquoted).
    let parameters: [Parameter]

    struct Parameter: Equatable {
        let name: String
        let value: String
    }

    /// Nil when `text` is not a media type; surrounding whitespace is allowed.
    init?(_ text: String) {
        var reader = Reader(bytes: Array(text.utf8))
        reader.skipWhitespace()
        guard let type = reader.token(), reader.consume(UInt8(ascii: "/")), let subtype = reader.token() else { return nil }
        var parameters: [Parameter] = []
        while true {
            reader.skipWhitespace()
            if reader.atEnd { break }
            guard reader.consume(UInt8(ascii: ";")) else { return nil }
            reader.skipWhitespace()
            // RFC 9110 allows empty parameters (`text/plain;;charset=utf-8`, a trailing `;`).
            if reader.atEnd || reader.peek == UInt8(ascii: ";") { continue }
            guard let name = reader.token(), reader.consume(UInt8(ascii: "=")) else { return nil }
            guard let value = reader.peek == UInt8(ascii: "\"") ? reader.quotedString() : reader.token() else { return nil }
            parameters.append(Parameter(name: name.lowercased(), value: value))
        }
        self.type = type.lowercased()
        self.subtype = subtype.lowercased()
        self.parameters = parameters
    }

    /// The values of every parameter called `name` (lowercase).
    func values(of name: String) -> [String] {
        parameters.filter { $0.name == name }.map(\.value)
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }

        mutating func skipWhitespace() {
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// RFC 9110 §5.6.2: one or more tchar.
        mutating func token() -> String? {
            let start = index
            while let byte = peek, Self.isTokenCharacter(byte) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// RFC 9110 §5.6.4, from the opening quote; the value without quotes and escapes.
        mutating func quotedString() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            var value: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, Self.isQuotable(escaped) else { return nil }
                    index += 1
                    value.append(escaped)
                case _ where Self.isQuotable(byte):
                    value.append(byte)
                default:
                    return nil
                }
            }
            return nil
        }

        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }

        /// HTAB, SP, VCHAR and obs-text: what a quoted string may hold, escaped or not (DQUOTE and backslash only
        /// escaped, which the caller handles first).
        static func isQuotable(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7F)
        }
    }
}
