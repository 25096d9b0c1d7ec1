/// Stored strings (labels, actors, certificate names, audit details) as they may be shown on a terminal or in
/// a text log: control characters, which could move the cursor, recolour or clear the screen, or start a new
/// line that forges a row, are written as visible escapes. The stored value is never changed; this is for
/// display only.
public enum TerminalText {
    /// The text with every control character (C0, DEL, C1), line and paragraph separator and bidirectional
    /// override written as `\n`, `\t`, `\x1b`, `\u{202e}`; a backslash is doubled so an escape in the output
    /// always means one in the value.
    public static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscaping($0) || $0 == "\\" }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x100 && needsEscaping(scalar): result += "\\x" + hex(scalar.value, digits: 2)
            case _ where needsEscaping(scalar): result += "\\u{" + hex(scalar.value, digits: 4) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Each line escaped as by ``escape(_:)``, joined by line breaks: for a message made of several lines, where a
    /// value quoted inside a line still cannot start a line of its own.
    public static func escapeLines(_ lines: [String]) -> String {
        lines.map(escape).joined(separator: "\n")
    }

    /// Whether `scalar` can change what a terminal shows beyond printing a character.
    public static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
