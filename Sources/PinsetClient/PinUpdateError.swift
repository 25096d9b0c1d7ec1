import PinsetSigning

/// Why an update, a seed or a stored state was refused.
///
/// Every failure leaves the current pins exactly as they were. `code` names the check that failed, in the
/// order the checks run; `reason` is a sentence for logs. Equality looks at the code only, so tests and callers
/// can match on `PinUpdateError(.stale)` without caring about the wording.
public struct PinUpdateError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable, CustomStringConvertible {
        /// The request could not be made or did not complete: DNS, connection, TLS, timeout, cancellation.
        case transport
        /// The trust server answered with a status other than 200 (redirects are not followed).
        case httpStatus(Int)
        /// The body is larger than `PinsetClientConfiguration.maximumBundleSize`; the transfer was cut off.
        case bodyTooLarge
        /// The CMS signature check failed: not DER, weak digest, wrong signer count, bad signature, untrusted signer.
        case signature(SignatureVerificationError.Code)
        /// The signed content is not a bundle payload: not JSON, a key missing, a value of the wrong type.
        case malformedPayload
        /// The bundle was issued for another customer.
        case wrongCustomer
        /// The signer certificate's notBefore is earlier than the revocation floor (`signers-not-before`) this
        /// client accepted before or the bundle itself carries: the signer was revoked.
        case revokedSigner
        /// The bundle was signed longer ago than the freshness window: possibly a replayed old bundle.
        case stale
        /// The bundle's signing time lies further in the future than the allowed clock skew.
        case fromTheFuture
        /// The bundle's `expires` time has passed.
        case expired
        /// The bundle's version is lower than the last accepted one.
        case rollback
        /// The bundle has the last accepted version but different pins: one of the two is not genuine.
        case versionContentMismatch
        /// The state file could not be written (or, for a stored state, read back).
        case storage

        public var description: String {
            switch self {
            case .transport: "transport"
            case .httpStatus(let status): "httpStatus(\(status))"
            case .bodyTooLarge: "bodyTooLarge"
            case .signature(let code): "signature(\(code.rawValue))"
            case .malformedPayload: "malformedPayload"
            case .wrongCustomer: "wrongCustomer"
            case .revokedSigner: "revokedSigner"
            case .stale: "stale"
            case .fromTheFuture: "fromTheFuture"
            case .expired: "expired"
            case .rollback: "rollback"
            case .versionContentMismatch: "versionContentMismatch"
            case .storage: "storage"
            }
        }
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
