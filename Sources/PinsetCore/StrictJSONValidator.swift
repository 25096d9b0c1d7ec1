/// Checks that bytes are exactly one JSON text (RFC 8259) in UTF-8, refusing what parsers disagree on.
///
/// Foundation's parser accepts a byte order mark and UTF-16/UTF-32 input, keeps the first of two equal keys
/// (Python's `json` keeps the last), and hands `1e2` or `7.0` to an integer field. A signed payload must read the
/// same in every client, so before it is decoded this refuses:
/// - anything but UTF-8 without a byte order mark (RFC 8259 §8.1), and malformed UTF-8 (overlong forms,
///   surrogates, code points above U+10FFFF), also as unpaired `\u` surrogate escapes;
/// - an object with two members of the same name (§4), compared after unescaping, at any depth, and also
///   when they are spelt differently but equal as Swift strings (canonically equivalent Unicode, such as
///   U+212A KELVIN SIGN and `K`): Foundation's decoder compares keys that way, other parsers by code points;
/// - anything outside the grammar: leading zeros, `NaN`, comments, trailing commas, control characters in
///   strings, a second value after the first;
/// - nesting deeper than `maximumDepth`, so hostile input cannot exhaust the stack.
///
/// Numbers with a fraction or an exponent are valid JSON; their locations are returned, so the decoder can
/// refuse them where an integer is required and still ignore unknown keys that newer servers may add.
///
/// A single forward pass over the bytes. Member names are compared as slices of the input (a name with
/// escapes is unescaped first), linearly within small objects and through a hash set in large ones, so
/// neither many members nor deep nesting costs more than linear time. Stateless and thread-safe.
public enum StrictJSONValidator {
    /// Deeper than any payload needs (format 1 nests four levels), shallow enough for any stack.
    public static let maximumDepth = 32

    /// Validates `bytes`; returns the paths (`hashes[0].x`, `expires`) of numbers written with a fraction or an
    /// exponent.
    public static func validate(_ bytes: some Collection<UInt8>) throws(PayloadError) -> [String] {
        var scanner = StrictJSONScanner(Array(bytes))
        try scanner.checkEncoding()
        scanner.skipWhitespace()
        try scanner.value(depth: 0)
        scanner.skipWhitespace()
        guard scanner.atEnd else { throw scanner.error("unexpected bytes after the JSON value") }
        return scanner.nonIntegerNumbers
    }
}

private struct StrictJSONScanner {
    enum PathComponent {
        case member(ArraySlice<UInt8>)
        case element(Int)
    }

    let bytes: [UInt8]
    var index = 0
    var path: [PathComponent] = []
    /// The names of the objects being read, innermost last; each object owns the names from its start index.
    var names: [ArraySlice<UInt8>] = []
    /// Objects with more members than this are checked for duplicates through a set.
    static let linearNameLimit = 16
    var nonIntegerNumbers: [String] = []

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var atEnd: Bool { index == bytes.count }

    func error(_ reason: String) -> PayloadError {
        PayloadError(path: renderedPath, reason: "\(reason) (byte offset \(index))", byteOffset: index)
    }

    var renderedPath: String {
        var out = ""
        for component in path {
            switch component {
            case .member(let name):
                let text = String(decoding: name, as: UTF8.self)
                out += out.isEmpty ? text : ".\(text)"
            case .element(let position): out += "[\(position)]"
            }
        }
        return out
    }

    /// Names the encoding when the input is not UTF-8 without a BOM, which RFC 8259 §8.1 requires of JSON
    /// exchanged between systems.
    func checkEncoding() throws(PayloadError) {
        guard !bytes.isEmpty else { throw PayloadError(path: "", reason: "the payload is empty") }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw PayloadError(path: "", reason: "the payload starts with a byte order mark; it must be UTF-8 without a BOM")
        }
        if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00])
            || (bytes.count >= 4 && bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0) || (bytes.count >= 4 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 0) {
            throw PayloadError(path: "", reason: "the payload is UTF-32; it must be UTF-8 without a BOM")
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || (bytes.count >= 2 && (bytes[0] == 0 || bytes[1] == 0)) {
            throw PayloadError(path: "", reason: "the payload is UTF-16; it must be UTF-8 without a BOM")
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    mutating func value(depth: Int) throws(PayloadError) {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try object(depth: depth + 1)
        case UInt8(ascii: "["): try array(depth: depth + 1)
        case UInt8(ascii: "\""): _ = try string(decodingName: false)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: throw error("unexpected character, expected a JSON value")
        }
    }

    mutating func object(depth: Int) throws(PayloadError) {
        guard depth <= StrictJSONValidator.maximumDepth else {
            throw error("nested deeper than \(StrictJSONValidator.maximumDepth) levels")
        }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        let firstName = names.count
        var largeObjectNames: Set<ArraySlice<UInt8>>?
        // Built only once a name outside ASCII appears: only then can two different spellings be one String.
        var canonicalNames: Set<String>?
        defer { names.removeSubrange(firstName...) }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
            let name = try string(decodingName: true)
            let duplicate: Bool
            if var seen = largeObjectNames {
                largeObjectNames = nil
                duplicate = !seen.insert(name).inserted
                largeObjectNames = seen
            } else {
                duplicate = names[firstName...].contains(name)
                names.append(name)
                if names.count - firstName > Self.linearNameLimit { largeObjectNames = Set(names[firstName...]) }
            }
            guard !duplicate else {
                throw error("the key \"\(String(decoding: name, as: UTF8.self))\" appears more than once in one object; parsers disagree on which one counts")
            }
            if canonicalNames == nil, name.contains(where: { $0 >= 0x80 }) {
                let earlier = largeObjectNames.map { Array($0.filter { $0 != name }) } ?? Array(names[firstName..<(names.count - 1)])
                canonicalNames = Set(earlier.map { String(decoding: $0, as: UTF8.self) })
            }
            if canonicalNames != nil, !canonicalNames!.insert(String(decoding: name, as: UTF8.self)).inserted {
                throw error("the key \"\(String(decoding: name, as: UTF8.self))\" is equivalent to another key of the object (Unicode canonical equivalence); parsers disagree on whether they are one key")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            path.append(.member(name))
            try value(depth: depth)
            path.removeLast()
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an object") }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or '}' in an object") }
            index += 1
            skipWhitespace()
        }
    }

    mutating func array(depth: Int) throws(PayloadError) {
        guard depth <= StrictJSONValidator.maximumDepth else {
            throw error("nested deeper than \(StrictJSONValidator.maximumDepth) levels")
        }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        var position = 0
        while true {
            path.append(.element(position))
            try value(depth: depth)
            path.removeLast()
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or ']' in an array") }
            index += 1
            skipWhitespace()
            position += 1
        }
    }

    mutating func literal(_ word: StaticString) throws(PayloadError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
            throw error("unexpected character, expected a JSON value")
        }
        index += expected.count
    }

    /// RFC 8259 §6. Records the path when a fraction or an exponent is present.
    mutating func number() throws(PayloadError) {
        var integral = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("a number needs digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("a number must not have leading zeros") }
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("a fraction needs digits after '.'") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("an exponent needs digits") }
            skipDigits()
        }
        if !integral { nonIntegerNumbers.append(renderedPath) }
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    /// RFC 8259 §7, with UTF-8 checked as RFC 3629 defines it. With `decodingName`, returns the string's value:
    /// a slice of the input, or its unescaped bytes when it has escapes.
    mutating func string(decodingName: Bool) throws(PayloadError) -> ArraySlice<UInt8> {
        index += 1
        let start = index
        var unescaped: [UInt8]?
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let end = index
                index += 1
                guard decodingName else { return [] }
                return unescaped.map { ArraySlice($0) } ?? bytes[start..<end]
            case UInt8(ascii: "\\"):
                if decodingName, unescaped == nil { unescaped = Array(bytes[start..<index]) }
                let scalar = try escape()
                if decodingName { UTF8.encode(scalar) { unescaped?.append($0) } }
            case 0..<0x20:
                throw error("a control character must be escaped inside a string")
            case 0x20..<0x80:
                unescaped?.append(byte)
                index += 1
            default:
                let sequenceStart = index
                try utf8Sequence()
                unescaped?.append(contentsOf: bytes[sequenceStart..<index])
            }
        }
    }

    /// One escape sequence after the backslash; a `\u` high surrogate must be followed by a `\u` low one.
    mutating func escape() throws(PayloadError) -> Unicode.Scalar {
        index += 1
        guard index < bytes.count else { throw error("unterminated escape sequence") }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hexQuad()
            if (0xDC00...0xDFFF).contains(unit) { throw error("an unpaired low surrogate escape") }
            if (0xD800...0xDBFF).contains(unit) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("an unpaired high surrogate escape")
                }
                index += 2
                let low = try hexQuad()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("an unpaired high surrogate escape") }
                let combined = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                guard let scalar = Unicode.Scalar(combined) else { throw error("an invalid surrogate pair") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(unit) else { throw error("an invalid \\u escape") }
            return scalar
        default:
            throw error("an invalid escape sequence")
        }
    }

    mutating func hexQuad() throws(PayloadError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw error("a \\u escape needs four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// One multi-byte UTF-8 sequence (RFC 3629 §4): no overlong form, no surrogate, nothing above U+10FFFF.
    mutating func utf8Sequence() throws(PayloadError) {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw error("invalid UTF-8")
        }
        guard bytes.count - index >= length else { throw error("invalid UTF-8: truncated sequence") }
        let second = bytes[index + 1]
        guard second >= lower, second <= upper else { throw error("invalid UTF-8") }
        for offset in 2..<max(2, length) where bytes[index + offset] & 0xC0 != 0x80 {
            throw error("invalid UTF-8")
        }
        index += length
    }
}
