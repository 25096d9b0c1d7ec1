/// A refusal of the admin API, as its body carries it: `{"error": {"status", "code", "message"}}`. The status says
/// the kind, the code which rule refused (stable across releases, for programs to act on), the message what to do
/// (for people; its wording may change).
public struct AdminAPIError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var status: Int
    public var code: AdminErrorCode
    public var message: String

    public init(status: Int, code: AdminErrorCode, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { message }

    private enum CodingKeys: String, CodingKey {
        case error
    }

    private enum FieldKeys: String, CodingKey {
        case status, code, message
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(keyedBy: FieldKeys.self, forKey: .error)
        status = try fields.decode(Int.self, forKey: .status)
        // A server older than the codes sends none; a newer one may send a code this client does not know.
        code = try fields.decodeIfPresent(AdminErrorCode.self, forKey: .code) ?? AdminErrorCode.forStatus(status)
        message = try fields.decode(String.self, forKey: .message)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var fields = container.nestedContainer(keyedBy: FieldKeys.self, forKey: .error)
        try fields.encode(status, forKey: .status)
        try fields.encode(code, forKey: .code)
        try fields.encode(message, forKey: .message)
    }
}

/// Which rule refused a request. A client acts on the code, never on the message's words. Codes are only ever
/// added; one a client does not know is handled by its status.
public struct AdminErrorCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    // The request itself.
    /// A field, parameter or path segment is malformed or out of range (400).
    public static let invalidInput = AdminErrorCode(rawValue: "invalidInput")
    /// No such path, or none under this method (404, 405).
    public static let noSuchEndpoint = AdminErrorCode(rawValue: "noSuchEndpoint")
    public static let methodNotAllowed = AdminErrorCode(rawValue: "methodNotAllowed")
    /// The body is not JSON, or too large (415, 413).
    public static let unsupportedMediaType = AdminErrorCode(rawValue: "unsupportedMediaType")
    public static let bodyTooLarge = AdminErrorCode(rawValue: "bodyTooLarge")

    // Who asks.
    /// No token, or one that authenticates no one (401).
    public static let unauthenticated = AdminErrorCode(rawValue: "unauthenticated")
    /// The admin lacks the role (403).
    public static let forbidden = AdminErrorCode(rawValue: "forbidden")
    /// Too many failed authentications from the address, refusals of the admin, or live checks it started (429).
    public static let throttled = AdminErrorCode(rawValue: "throttled")

    // What is asked for.
    public static let notFound = AdminErrorCode(rawValue: "notFound")
    public static let customerNotFound = AdminErrorCode(rawValue: "customerNotFound")
    public static let hostNotFound = AdminErrorCode(rawValue: "hostNotFound")
    public static let pinNotFound = AdminErrorCode(rawValue: "pinNotFound")
    public static let changeRequestNotFound = AdminErrorCode(rawValue: "changeRequestNotFound")
    public static let adminNotFound = AdminErrorCode(rawValue: "adminNotFound")
    public static let customerExists = AdminErrorCode(rawValue: "customerExists")
    public static let hostExists = AdminErrorCode(rawValue: "hostExists")
    public static let pinExists = AdminErrorCode(rawValue: "pinExists")
    public static let adminExists = AdminErrorCode(rawValue: "adminExists")

    // The rules (409).
    /// A rule of the admin library refused it: the live chain would not match, a host whose name leads only to
    /// addresses the server does not check, a setting only an operator may change on a reviewed customer.
    public static let refused = AdminErrorCode(rawValue: "refused")
    public static let lastPinOfHost = AdminErrorCode(rawValue: "lastPinOfHost")
    public static let tooFewLegacyPins = AdminErrorCode(rawValue: "tooFewLegacyPins")
    public static let lastHostOfCustomer = AdminErrorCode(rawValue: "lastHostOfCustomer")
    /// The host's pins or port changed between the live-chain check and the write.
    public static let changedSinceCheck = AdminErrorCode(rawValue: "changedSinceCheck")
    /// The change request was made at a version of the pin set that has moved on since.
    public static let stalePinSet = AdminErrorCode(rawValue: "stalePinSet")
    /// An admin tried to approve its own change request, or acknowledge a break-glass application it took part in.
    public static let selfApproval = AdminErrorCode(rawValue: "selfApproval")
    /// The change request or break-glass application was decided, expired or voided already.
    public static let notOpen = AdminErrorCode(rawValue: "notOpen")
    /// The author, approver or token no longer holds what the action needs: a role taken, an admin disabled, a
    /// token revoked.
    public static let notPermittedAnyMore = AdminErrorCode(rawValue: "notPermittedAnyMore")
    /// The author has as many open change requests as one admin may have.
    public static let tooManyOpenRequests = AdminErrorCode(rawValue: "tooManyOpenRequests")
    /// Edits of the customer need review now: make the edit again as a change request.
    public static let reviewRequired = AdminErrorCode(rawValue: "reviewRequired")
    public static let revocationFloorRefused = AdminErrorCode(rawValue: "revocationFloorRefused")
    /// A new own key was made and kept pending, signing nothing: the message carries its certificate for the
    /// customer's apps; the same call with `replaceTrustAnchor` then installs exactly that key.
    public static let trustAnchorPending = AdminErrorCode(rawValue: "trustAnchorPending")
    /// The report-only window cannot be set as asked now: its end is not after now, or lies beyond the maximum.
    public static let reportOnlyRefused = AdminErrorCode(rawValue: "reportOnlyRefused")

    // The server.
    /// The database could not be reached, or the server has no status yet (503).
    public static let unavailable = AdminErrorCode(rawValue: "unavailable")
    /// Anything no rule expected; the server's log has the detail (500).
    public static let internalError = AdminErrorCode(rawValue: "internalError")

    /// Every code the API sends, as the OpenAPI document lists them.
    public static let all: [AdminErrorCode] = [
        invalidInput, noSuchEndpoint, methodNotAllowed, unsupportedMediaType, bodyTooLarge,
        unauthenticated, forbidden, throttled,
        notFound, customerNotFound, hostNotFound, pinNotFound, changeRequestNotFound, adminNotFound,
        customerExists, hostExists, pinExists, adminExists,
        refused, lastPinOfHost, tooFewLegacyPins, lastHostOfCustomer, changedSinceCheck, stalePinSet, selfApproval, notOpen,
        notPermittedAnyMore, tooManyOpenRequests, reviewRequired, revocationFloorRefused, trustAnchorPending, reportOnlyRefused,
        unavailable, internalError,
    ]

    /// The code an error document without one stands for, by its status.
    public static func forStatus(_ status: Int) -> AdminErrorCode {
        switch status {
        case 400: invalidInput
        case 401: unauthenticated
        case 403: forbidden
        case 404: notFound
        case 405: methodNotAllowed
        case 413: bodyTooLarge
        case 415: unsupportedMediaType
        case 429: throttled
        case 503: unavailable
        case 500...: internalError
        default: refused
        }
    }
}
