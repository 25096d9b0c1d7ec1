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
        /// The host name leads only to addresses the server's ``OutboundAddressPolicy`` refuses: nothing was connected to.
        case addressNotAllowed
    }

    public let kind: Kind
    public let description: String

    public init(_ message: String, kind: Kind = .unreachable) {
        self.kind = kind
        description = TerminalText.escape(message)
    }

    /// What an admin is told of this failure to check `endpoint`. An operator reads the detail; anyone else reads one
    /// wording for every failure to get a chain, so that the answer does not tell a closed port from an open one that
    /// sent nothing, or from one that timed out or speaks something other than TLS: otherwise anyone who may add a
    /// host could map which ports of the server's network are open. A refusal by the address policy is told to an
    /// operator as it is, with the addresses the name resolved to; anyone else learns only that the name leads to
    /// addresses the server does not check, not what they are (the server's internal DNS is not theirs to read).
    /// Input of the admin's own is told as it is.
    public func told(toOperator: Bool, endpoint: String) -> String {
        switch kind {
        case .invalidInput: description
        case .addressNotAllowed:
            toOperator ? description : "\(TerminalText.escape(endpoint)) leads only to addresses this server does not connect to for live-chain checks (loopback, private or other special-purpose ones), so nothing was checked. An operator can read the addresses in the server's log, and allow such ranges with 'monitoring.allowedAddresses'."
        case .unreachable, .notValidated:
            toOperator ? description : Self.withoutDetail(endpoint: endpoint)
        }
    }

    /// The one wording of a failed fetch for admins who are not operators.
    public static func withoutDetail(endpoint: String) -> String {
        "Could not fetch a validated certificate chain from \(TerminalText.escape(endpoint)) (the connection, the TLS handshake or the chain's validation failed). An operator can read the reason in the server's log."
    }
}
