import PinsetVerification

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
        /// The bundle's lifetime (`expires - timestamp`) is longer than
        /// `PinsetClientConfiguration.maximumBundleLifetime`: no Pinset server issues such a bundle.
        case lifetimeTooLong
        /// The bundle's `version` lies further ahead of its own signing time than a Pinset server ever signs
        /// (`BundleBounds.maximumVersionLead`): a fast-forward attempt with a leaked signer key.
        case versionAheadOfSigningTime
        /// The bundle announces a report-only window ending further after its own signing time than
        /// `BundleBounds.maximumReportOnlySeconds`: no Pinset server signs one, so its signer key is in other hands.
        case reportOnlyTooLong
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
        /// The download was refused only because of the device's clock: read at the time the bundle was signed,
        /// it passes every check. `PinUpdateError.estimatedClockSkew` says by how much the clock is off, so an
        /// app can tell its user to correct the date and time. Nothing was accepted.
        case clockSkew
        /// `PinsetClientConfiguration.transparency` is set and the transparency log does not prove the bundle's
        /// content (see `TransparencyRefusal`). The pins held stay in force.
        case transparency(TransparencyRefusal)

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
            case .lifetimeTooLong: "lifetimeTooLong"
            case .versionAheadOfSigningTime: "versionAheadOfSigningTime"
            case .reportOnlyTooLong: "reportOnlyTooLong"
            case .fromTheFuture: "fromTheFuture"
            case .expired: "expired"
            case .rollback: "rollback"
            case .versionContentMismatch: "versionContentMismatch"
            case .storage: "storage"
            case .clockSkew: "clockSkew"
            case .transparency(let refusal): "transparency(\(refusal.rawValue))"
            }
        }
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: UInt
    /// For `.clockSkew`: how far the device clock is estimated to be off, positive when it runs ahead. The
    /// estimate is the device time minus the trust server's time (its `Date` header, or the bundle's signing
    /// time), so it is accurate to the re-signing interval at best. `nil` for every other code.
    public let estimatedClockSkew: Duration?

    public init(_ code: Code, _ reason: String, estimatedClockSkew: Duration? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.estimatedClockSkew = estimatedClockSkew
        self.file = file
        self.line = line
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
