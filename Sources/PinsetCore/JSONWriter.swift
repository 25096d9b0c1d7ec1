/// A minimal streaming JSON writer with fixed key order, so that signed payloads are reproducible.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    init() {
        bytes.reserveCapacity(1024)
    }

    mutating func beginObject() { valuePrefix(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    mutating func endObject() { needsComma.removeLast(); bytes.append(UInt8(ascii: "}")) }
    mutating func beginArray() { valuePrefix(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    mutating func endArray() { needsComma.removeLast(); bytes.append(UInt8(ascii: "]")) }

    mutating func key(_ key: String) {
        valuePrefix()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        // The value that follows must not be preceded by a comma.
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String) { valuePrefix(); appendQuoted(value) }
    mutating func integer(_ value: Int64) { valuePrefix(); bytes.append(contentsOf: String(value).utf8) }
    mutating func bool(_ value: Bool) { valuePrefix(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }

    /// Appends an already encoded JSON value.
    mutating func rawValue(_ encoded: [UInt8]) { valuePrefix(); bytes.append(contentsOf: encoded) }

    mutating func stringArray(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    private mutating func valuePrefix() {
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(contentsOf: Array(Hex.encode([byte]).utf8))
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
