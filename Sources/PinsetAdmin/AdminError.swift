import PinsetAdminContract
import PinsetCore

/// An admin operation refused or failed; the message says what was wrong and how to fix it. Messages quote
/// untrusted text (a server's certificate names, file contents), so control characters are kept escaped
/// wherever the message is shown.
public struct AdminError: Error, CustomStringConvertible, Sendable {
    /// What kind of refusal: front ends map it (the admin API to its HTTP status); the message says the rest.
    public enum Kind: Sendable {
        /// The rule or the input refused the operation.
        case refused
        /// No credential, or one that authenticates no one.
        case unauthenticated
        /// The authenticated admin lacks the role.
        case forbidden
        /// The thing asked for does not exist, or the admin may not see it.
        case notFound
        /// The admin asked for more than its share in a while (``LiveCheckBudget``); `retryAfterSeconds` says when to try again.
        case throttled
    }

    public let description: String
    public let kind: Kind
    /// For `throttled`: the seconds until the admin may try again.
    public let retryAfterSeconds: Int?
    /// The rule that refused, for programs: the kind's own code unless a more precise one is given.
    public let code: AdminErrorCode

    public init(_ message: String, kind: Kind = .refused, code: AdminErrorCode? = nil, retryAfterSeconds: Int? = nil) {
        description = TerminalText.escape(message)
        self.kind = kind
        self.retryAfterSeconds = retryAfterSeconds
        self.code = code ?? Self.code(of: kind)
    }

    /// A message of several lines (a summary, then one line per problem), each escaped on its own.
    public init(lines: [String], kind: Kind = .refused, code: AdminErrorCode? = nil) {
        description = TerminalText.escapeLines(lines)
        self.kind = kind
        retryAfterSeconds = nil
        self.code = code ?? Self.code(of: kind)
    }

    /// A customer that does not exist, or that `viewer` (a named admin) may not see: told alike, so that names of
    /// other customers do not leak.
    public static func noCustomer(_ customer: CustomerName, visibleTo viewer: String? = nil) -> AdminError {
        let message = viewer.map { "There is no customer '\(customer)' that \($0) may see." }
            ?? "Customer '\(customer)' does not exist. List customers with 'pinset customer list'."
        return AdminError(message, kind: .notFound, code: .customerNotFound)
    }

    public static func noHost(_ hostname: Hostname, of customer: CustomerName) -> AdminError {
        AdminError("Customer '\(customer)' has no host '\(hostname)'. List its hosts with 'pinset host list \(customer)'.", kind: .notFound, code: .hostNotFound)
    }

    private static func code(of kind: Kind) -> AdminErrorCode {
        switch kind {
        case .refused: .refused
        case .unauthenticated: .unauthenticated
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .throttled: .throttled
        }
    }
}
