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
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
