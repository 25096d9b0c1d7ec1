import Foundation
import PinsetAdminContract
import PinsetCore

/// Prints human tables or JSON. Stored strings reach the terminal only through `TerminalText.escape` (tables,
/// notes, warnings, `line`); JSON output is escaped by the JSON encoder.
enum Output {
    static func table(_ header: [String], _ rows: [[String]]) {
        guard !rows.isEmpty else { return }
        let rows = rows.map { $0.map(TerminalText.escape) }
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(line(header))
        for row in rows { print(line(row)) }
    }

    /// A string or number of a JSON document as a table cell; `-` where it is missing.
    static func text(_ value: Any?) -> String {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        case nil, is NSNull: "-"
        case let other?: "\(other)"
        }
    }

    /// A document, as the admin API would send it but indented: the same document prints the same whether it was
    /// made on this host or came from a server.
    static func json(_ document: some Encodable) throws {
        print(String(decoding: try AdminResponse.encode(document, pretty: true), as: UTF8.self))
    }

    /// One line on standard output, with stored strings in it escaped.
    static func line(_ text: String) {
        print(TerminalText.escape(text))
    }

    static func warn(_ message: String) {
        standardError("warning: \(TerminalText.escape(message))\n")
    }

    static func note(_ message: String) {
        standardError("\(TerminalText.escape(message))\n")
    }

    /// Writes to standard error, ignoring a reader that went away (`pinset … 2>&1 | head -1`): the command's work
    /// is done or refused by then, and its exit status must say which, not a crash on `EPIPE`.
    static func standardError(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    /// Writes to standard output; throws when the reader went away (`pinset export … | head -c 10`) rather than
    /// letting `EPIPE` crash the process. A server's announcement lines ignore the error: serving goes on.
    static func standardOutput(_ bytes: some Sequence<UInt8>) throws {
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(bytes))
        } catch {
            throw CLIError("Writing to standard output failed (\(error.localizedDescription)): what it received is incomplete. Give --out FILE, or a reader that takes everything.")
        }
    }

    static let timestampFormat: Date.ISO8601FormatStyle = .iso8601

    static func date(_ date: Date?) -> String {
        guard let date else { return "-" }
        return date.formatted(timestampFormat)
    }
}

/// A failure of a command itself (not of an admin rule, which throws `AdminError`); the message says what was
/// wrong and how to fix it. Messages quote untrusted text (a server's certificate names, file contents), so
/// control characters are shown escaped.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = TerminalText.escape(message) }
    /// A summary and one line per problem, each escaped on its own.
    init(lines: [String]) { description = TerminalText.escapeLines(lines) }
}
