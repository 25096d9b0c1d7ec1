/// One operation of the admin API, declared once: the server routes by it and validates its inputs by it, the
/// client builds its requests from it, the CLI and the dashboard name it, and a test holds the OpenAPI document to
/// it. ``AdminOperation/all`` lists every one.
public struct AdminOperation: Sendable, Hashable, CustomStringConvertible {
    /// The OpenAPI `operationId`.
    public let id: String
    public let method: String
    /// Under ``AdminOperation/prefix``, e.g. `/customers/{customer}/hosts`.
    public let path: String
    public let access: Access
    public let query: [AdminField]
    /// The JSON object body's fields; empty for an operation that takes no body.
    public let body: [AdminField]
    /// The statuses of its successes, first the usual one.
    public let successes: [Int]

    /// Who may call an operation. The admin library decides each call; this is what it decides by.
    public enum Access: Sendable, Hashable, CustomStringConvertible {
        /// No token: the API's own description.
        case anyone
        /// Any enabled admin; what it answers holds only what that admin may see.
        case anyAdmin
        /// The role for the customer the call is about; the operator role holds every role for every customer.
        case role(AdminRole)

        public var description: String {
            switch self {
            case .anyone: "anyone"
            case .anyAdmin: "any admin"
            case .role(let role): role.rawValue
            }
        }
    }

    public static let prefix = "/api/v1"

    init(_ id: String, _ method: String, _ path: String, access: Access, query: [AdminField] = [], body: [AdminField] = [], successes: [Int] = [200]) {
        self.id = id
        self.method = method
        self.path = path
        self.access = access
        self.query = query
        self.body = body
        self.successes = successes
    }

    public var description: String { "\(method) \(Self.prefix)\(path)" }

    /// The path's segments; a parameter is `{name}`.
    public var segments: [Segment] {
        path.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
    }

    public enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    /// The request target for these path parameters and query values, percent-encoded: what a client sends after
    /// the server's base path. Query values left nil are not sent.
    ///
    /// - Precondition: a value for every path parameter; the names are the declaration's, so a missing one is a
    ///   programming error.
    public func target(_ parameters: [String: String] = [:], query values: [(String, String?)] = []) -> String {
        var target = Self.prefix
        for segment in segments {
            switch segment {
            case .literal(let text):
                target += "/" + text
            case .parameter(let name):
                guard let value = parameters[name] else { preconditionFailure("\(self) needs the path parameter '\(name)'") }
                target += "/" + AdminURLEncoding.component(value)
            }
        }
        let pairs = values.compactMap { name, value in value.map { "\(AdminURLEncoding.component(name))=\(AdminURLEncoding.component($0))" } }
        return pairs.isEmpty ? target : target + "?" + pairs.joined(separator: "&")
    }
}

/// A field of a request body or a query parameter, with the rule the server holds it to.
public struct AdminField: Sendable, Hashable {
    public let name: String
    public let kind: Kind
    public let required: Bool
    /// What to give, for the refusal of a request without a required field.
    public let hint: String?

    public enum Kind: Sendable, Hashable {
        /// Its text is checked by the rule for what it names (a hostname, a key).
        case string
        /// Text an admin writes for people (a reason, a note): at most `maximumLength` characters.
        case text(maximumLength: Int)
        /// A list of at most `maximumCount` strings.
        case strings(maximumCount: Int)
        case boolean
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
    }

    public init(_ name: String, _ kind: Kind, required: Bool = false, hint: String? = nil) {
        self.name = name
        self.kind = kind
        self.required = required
        self.hint = hint
    }

    static func string(_ name: String, required: Bool = false, hint: String? = nil) -> AdminField {
        AdminField(name, .string, required: required, hint: hint)
    }

    static func text(_ name: String, required: Bool = false, hint: String? = nil) -> AdminField {
        AdminField(name, .text(maximumLength: AdminLimits.reasonLength), required: required, hint: hint)
    }

    /// A bound as people write it: `1`, not `1.0`.
    public static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    static func strings(_ name: String) -> AdminField {
        AdminField(name, .strings(maximumCount: AdminLimits.maximumListCount))
    }

    static func boolean(_ name: String) -> AdminField {
        AdminField(name, .boolean)
    }

    static func integer(_ name: String, _ range: ClosedRange<Int>) -> AdminField {
        AdminField(name, .integer(range))
    }
}

/// Percent-encoding for one path segment or query component: everything but RFC 3986's unreserved characters.
public enum AdminURLEncoding {
    public static func component(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                encoded += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return encoded
    }
}
