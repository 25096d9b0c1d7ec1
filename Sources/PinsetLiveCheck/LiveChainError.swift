import PinsetCore

/// Why a host's live chain could not be fetched or did not validate. The message quotes what the server sent
/// (certificate names, policy failures), so control characters are shown escaped.
public struct LiveChainError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// No chain: connecting or the handshake failed, or the server presented nothing usable.
        case unreachable
        /// The chain was presented but does not lead to a trusted root for the host name.
        case notValidated
        /// The command's own input (a CA file, an address) is wrong.
        case invalidInput
    }

    public let kind: Kind
    public let description: String

    public init(_ message: String, kind: Kind = .unreachable) {
        self.kind = kind
        description = TerminalText.escape(message)
    }
}
