import PinsetCore

/// One access-log line, written straight into a byte buffer: the fields and escaping of the server's other log
/// lines (``LineLogHandler``: logfmt text or a JSON object, keys in order), without building a dictionary, a
/// `String` per field or a `Date` formatter per request.
enum AccessLogLine {
    /// `TIME info pinset: request bytes=N duration_us=N method=M remote=R status=S target=T user_agent=U`
    static func appendText(_ entry: AccessLogEntry, time: (prefix: [UInt8], milliseconds: Int), to bytes: inout [UInt8]) {
        appendTime(time, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
        bytes.append(contentsOf: " info pinset: request bytes=".utf8)
        appendDecimal(entry.bodyBytes, to: &bytes)
        bytes.append(contentsOf: " duration_us=".utf8)
        appendDecimal(Int(entry.duration.microseconds), to: &bytes)
        bytes.append(contentsOf: " method=".utf8)
        appendTextValue(entry.method, to: &bytes)
        bytes.append(contentsOf: " remote=".utf8)
        appendTextValue(entry.remoteAddress, to: &bytes)
        bytes.append(contentsOf: " status=".utf8)
        appendDecimal(entry.status, to: &bytes)
        bytes.append(contentsOf: " target=".utf8)
        appendTextValue(entry.target, to: &bytes)
        bytes.append(contentsOf: " user_agent=".utf8)
        appendTextValue(entry.userAgent ?? "-", to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// `{"bytes":"N","duration_us":"N","level":"info","logger":"pinset","method":…,"msg":"request",…}`, every value a
    /// string, as the other JSON log lines carry their fields.
    static func appendJSON(_ entry: AccessLogEntry, time: (prefix: [UInt8], milliseconds: Int), to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"bytes":""#.utf8)
        appendDecimal(entry.bodyBytes, to: &bytes)
        bytes.append(contentsOf: #"","duration_us":""#.utf8)
        appendDecimal(Int(entry.duration.microseconds), to: &bytes)
        bytes.append(contentsOf: #"","level":"info","logger":"pinset","method":""#.utf8)
        appendJSONString(entry.method, to: &bytes)
        bytes.append(contentsOf: #"","msg":"request","remote":""#.utf8)
        appendJSONString(entry.remoteAddress, to: &bytes)
        bytes.append(contentsOf: #"","status":""#.utf8)
        appendDecimal(entry.status, to: &bytes)
        bytes.append(contentsOf: #"","target":""#.utf8)
        appendJSONString(entry.target, to: &bytes)
        bytes.append(contentsOf: #"","ts":""#.utf8)
        appendTime(time, to: &bytes)
        bytes.append(contentsOf: #"","user_agent":""#.utf8)
        appendJSONString(entry.userAgent ?? "-", to: &bytes)
        bytes.append(contentsOf: "\"}\n".utf8)
    }

    private static func appendTime(_ time: (prefix: [UInt8], milliseconds: Int), to bytes: inout [UInt8]) {
        bytes.append(contentsOf: time.prefix)
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(ascii: "0") + UInt8(time.milliseconds / 100))
        bytes.append(UInt8(ascii: "0") + UInt8(time.milliseconds / 10 % 10))
        bytes.append(UInt8(ascii: "0") + UInt8(time.milliseconds % 10))
    }

    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    /// A logfmt value: as it is when every byte is printable ASCII other than a space, `"`, `=` or `\`, which is
    /// what a request target, a method or an address almost always are; otherwise quoted and escaped by the rule the
    /// other log lines use.
    static func appendTextValue(_ value: String, to bytes: inout [UInt8]) {
        let start = bytes.count
        var plain = !value.isEmpty
        for byte in value.utf8 {
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "="), byte != UInt8(ascii: "\\") else {
                plain = false
                break
            }
            bytes.append(byte)
        }
        if plain { return }
        bytes.removeSubrange(start...)
        bytes.append(contentsOf: LineLogHandler.field(value).utf8)
    }

    /// The content of a JSON string, escaped as `JSONSerialization` escapes it for the other log lines: `"` and `\`,
    /// the control characters below U+0020 (`\n`, `\r`, `\t`, `\b`, `\f` by name, the rest as `\u00XX`); `/` and
    /// everything else as it is.
    static func appendJSONString(_ value: String, to bytes: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0..<0x20:
                bytes.append(contentsOf: #"\u00"#.utf8)
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
    }
}
