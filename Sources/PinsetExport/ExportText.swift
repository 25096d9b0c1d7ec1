/// Text that goes into an exported file from the pin set: escaped for XML, and labels made safe for comments.
enum ExportText {
    static func xmlEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// `text` as the body of an XML comment, which may not hold `--` nor end with `-` (XML 1.0, section 2.5): a
    /// customer name may hold `--`. The second hyphen of each pair becomes U+2010 HYPHEN, which reads the same.
    static func xmlComment(_ text: String) -> String {
        var result = ""
        for character in text {
            result.append(character == "-" && result.last == "-" ? "\u{2010}" : character)
        }
        if result.last == "-" { result.append(" ") }
        return "<!-- \(result) -->"
    }

    /// A pin's label and next-key state, for a comment beside it. Labels are free text written by admins, so only
    /// printable ASCII that cannot end or break a comment in any of the formats is kept (no `-`, which could make
    /// XML's forbidden `--`; no line break, which would end a Kotlin line comment; no backslash, which Java reads
    /// as a Unicode escape even in comments; nothing that reorders text on screen), and the length is capped.
    static func comment(for pin: StaticPinSet.Pin) -> String? {
        var parts: [String] = []
        var label = Substring(String(pin.label.unicodeScalars.prefix(80).map { scalar -> Character in
            let letterOrDigit = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
            return letterOrDigit || " ._:/@()=,+#".unicodeScalars.contains(scalar) ? Character(scalar) : "_"
        }))
        while label.first == " " { label.removeFirst() }
        while label.last == " " { label.removeLast() }
        if !label.isEmpty { parts.append(String(label)) }
        if pin.isNext && label.lowercased() != "next key" { parts.append("next key") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
