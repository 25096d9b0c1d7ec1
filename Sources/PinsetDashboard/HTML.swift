/// A piece of HTML. Interpolated strings are escaped, interpolated `HTML` is not: markup is written only in
/// literals, so no name, reason or host from the database can become markup.
struct HTML: ExpressibleByStringInterpolation, Sendable {
    let rendered: String

    init(stringLiteral value: String) {
        rendered = value
    }

    init(stringInterpolation: Interpolation) {
        rendered = stringInterpolation.output
    }

    struct Interpolation: StringInterpolationProtocol {
        var output = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            output.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            output += literal
        }

        mutating func appendInterpolation(_ text: String) {
            output += HTML.escape(text)
        }

        mutating func appendInterpolation(_ number: some BinaryInteger) {
            output += String(number)
        }

        mutating func appendInterpolation(_ html: HTML) {
            output += html.rendered
        }

        mutating func appendInterpolation(_ list: [HTML]) {
            for html in list { output += html.rendered }
        }
    }

    /// Safe in element content and in double- or single-quoted attribute values.
    ///
    /// Scalar by scalar, never by `Character`: a Character is a grapheme cluster, so `"` followed by a combining
    /// mark, or a prepend character followed by `<`, is one Character equal to neither, and would pass unescaped.
    static func escape(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}
