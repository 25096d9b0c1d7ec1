import PinsetCore

/// An admin operation refused or failed; the message says what was wrong and how to fix it. Messages quote
/// untrusted text (a server's certificate names, file contents), so control characters are kept escaped
/// wherever the message is shown.
public struct AdminError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ message: String) { description = TerminalText.escape(message) }
}
