import Foundation

/// Splits a migration file into its statements at the semicolons that end them: not those inside quotes,
/// comments or `$$`-quoted function bodies.
enum SQLScript {
    static func statements(_ script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var characters = Array(script)[...]
        var meaningful = false
        func finish() {
            if meaningful { statements.append(current.trimmingCharacters(in: .whitespacesAndNewlines)) }
            current = ""
            meaningful = false
        }
        while let character = characters.popFirst() {
            switch character {
            case "-" where characters.first == "-":
                // A comment runs to the end of the line; it is left out.
                while let next = characters.popFirst(), next != "\n" {}
                current.append("\n")
            case "'", "\"":
                current.append(character)
                while let next = characters.popFirst() {
                    current.append(next)
                    if next == character { break }
                }
                meaningful = true
            case "$" where characters.first == "$":
                characters.removeFirst()
                current += "$$"
                while let next = characters.popFirst() {
                    current.append(next)
                    if next == "$" && characters.first == "$" {
                        characters.removeFirst()
                        current.append("$")
                        break
                    }
                }
                meaningful = true
            case ";":
                finish()
            default:
                current.append(character)
                if !character.isWhitespace { meaningful = true }
            }
        }
        finish()
        return statements
    }
}

/// Rewrites the store's `?` placeholders as PostgreSQL's `$1`, `$2`, …, leaving quoted text and comments alone.
enum PostgresPlaceholders {
    static func numbered(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 8)
        var number = 0
        var quote: Character?
        var inComment = false
        var previous: Character?
        for character in sql {
            defer { previous = character }
            if inComment {
                if character == "\n" { inComment = false }
            } else if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "-" && previous == "-" {
                inComment = true
            } else if character == "?" {
                number += 1
                result += "$\(number)"
                continue
            }
            result.append(character)
        }
        return result
    }
}
