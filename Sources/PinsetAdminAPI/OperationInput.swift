import Foundation
import PinsetAdminContract
import PinsetCore

/// A request's inputs, checked against its operation's declaration before any rule sees them: the path's
/// parameters, the declared query parameters and the JSON body, each of its declared kind and within its limits.
struct OperationInput {
    let operation: AdminOperation
    let parameters: [String: String]
    let body: JSONBody
    private let query: [String: String]

    init(_ request: AdminAPIRequest, _ operation: AdminOperation, _ parameters: [String: String]) throws {
        self.operation = operation
        self.parameters = parameters
        // Parameters no operation declares are ignored, as HTTP caches and proxies may add their own.
        let given = request.query
        let items = request.queryItems
        var query: [String: String] = [:]
        for field in operation.query {
            guard let text = given[field.name] else { continue }
            // Which of two values was meant cannot be told; a body field given twice is refused the same way.
            guard items.filter({ $0.name == field.name }).count == 1 else {
                throw APIFailure(400, "The query parameter '\(field.name)' is given more than once; give it once.")
            }
            try Self.check(text, field)
            query[field.name] = text
        }
        self.query = query
        // An operation that takes no body ignores one, as HTTP lets a GET or DELETE carry one that means nothing.
        body = try JSONBody(operation.body.isEmpty ? AdminAPIRequest(method: request.method, target: request.target, headers: [], body: [], remoteAddress: request.remoteAddress) : request, fields: operation.body)
    }

    private static func check(_ text: String, _ field: AdminField) throws {
        switch field.kind {
        case .boolean:
            guard text == "true" || text == "false" else { throw APIFailure(400, "'\(field.name)' is '\(TerminalText.escape(String(text.prefix(40))))'; give true or false.") }
        case .integer(let range):
            guard let value = Int(text), range.contains(value) else {
                throw APIFailure(400, "'\(field.name)' must be a whole number from \(range.lowerBound) to \(range.upperBound).")
            }
        case .number(let range):
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw APIFailure(400, "'\(field.name)' must be a number from \(AdminField.format(range.lowerBound)) to \(AdminField.format(range.upperBound)).")
            }
        case .string, .text, .strings:
            break
        }
    }

    func customer() throws -> CustomerName { try CustomerName(try parameter("customer")) }

    func hostname() throws -> Hostname { try Hostname(try parameter("hostname")) }

    /// A change request's or break-glass application's number: anything else names nothing there is.
    func id() throws -> Int64 {
        let text = try parameter("id")
        guard let id = Int64(text), id > 0 else {
            throw APIFailure(404, "'\(TerminalText.escape(String(text.prefix(40))))' is not a number of a change request or break-glass application.", code: .notFound)
        }
        return id
    }

    /// A handler that asks for what its operation does not declare is a bug of this server: answered 500, which
    /// the in-process tests of every operation catch, rather than a crash that would stop the bundles being served.
    private func parameter(_ name: String) throws -> String {
        guard let value = parameters[name] else { throw APIFailure(500, "\(operation) declares no path parameter '\(name)'.") }
        return value
    }

    func string(_ name: String) throws -> String? {
        try declared(name)
        return query[name]
    }

    func bool(_ name: String) throws -> Bool? {
        try declared(name)
        return query[name].map { $0 == "true" }
    }

    func integer(_ name: String) throws -> Int? {
        try declared(name)
        return query[name].flatMap { Int($0) }
    }

    func number(_ name: String) throws -> Double? {
        try declared(name)
        return query[name].flatMap { Double($0) }
    }

    private func declared(_ name: String) throws {
        guard operation.query.contains(where: { $0.name == name }) else { throw APIFailure(500, "\(operation) declares no query parameter '\(name)'.") }
    }
}

/// A request's JSON object body, read strictly (`StrictJSONValidator`: no duplicate keys, UTF-8 only) and typed
/// exactly (`JSONValue`: `"true"` is not true, `1` not a string): only the declared fields, each of its kind and
/// within its limits, the required ones present.
struct JSONBody {
    private let object: [String: JSONValue]
    private let fields: [String: AdminField]
    private let bytes: [UInt8]

    init(_ request: AdminAPIRequest, fields declared: [AdminField]) throws {
        fields = Dictionary(uniqueKeysWithValues: declared.map { ($0.name, $0) })
        bytes = request.body.isEmpty ? Array("{}".utf8) : request.body
        if request.body.isEmpty {
            object = [:]
        } else {
            try Self.requireJSONMediaType(request)
            guard request.body.count <= AdminLimits.maximumBodyBytes else {
                throw APIFailure(413, "The body is larger than \(AdminLimits.maximumBodyBytes) bytes.")
            }
            let value: JSONValue
            do {
                _ = try StrictJSONValidator.validate(request.body)
                value = try JSONDecoder().decode(JSONValue.self, from: Data(request.body))
            } catch {
                throw APIFailure(400, "The body is not valid JSON: \(Self.describe(error))")
            }
            guard case .object(let object) = value else { throw APIFailure(400, "The body must be a JSON object.") }
            let fields = self.fields
            if let unknown = object.keys.sorted().first(where: { fields[$0] == nil }) {
                let names = declared.map(\.name).sorted()
                throw APIFailure(400, names.isEmpty
                    ? "Unknown field '\(TerminalText.escape(String(unknown.prefix(40))))'; this endpoint takes no body."
                    : "Unknown field '\(TerminalText.escape(String(unknown.prefix(40))))'; this endpoint takes \(names.joined(separator: ", ")).")
            }
            self.object = object
        }
        // Every missing required field at once, so that one refusal says all that is missing.
        let missing = declared.filter { $0.required && object[$0.name] == nil }
        if missing.count > 1 {
            throw APIFailure(400, "Give " + missing.map { field in "'\(field.name)'\(field.hint.map { " (\($0))" } ?? "")" }.joined(separator: " and ") + ".")
        }
        for field in declared {
            try check(field)
        }
    }

    /// A field is given with a value or left out: `null` is neither, and is refused rather than guessed at.
    private func check(_ field: AdminField) throws {
        let key = field.name
        guard let value = object[key] else {
            if field.required { throw APIFailure(400, "Give '\(key)'\(field.hint.map { ": \($0)" } ?? "").") }
            return
        }
        switch (field.kind, value) {
        case (_, .null):
            throw APIFailure(400, "'\(key)' is null; leave it out, or give it a value.")
        case (.string, .string):
            break
        case (.text(let maximumLength), .string(let text)):
            guard text.unicodeScalars.count <= maximumLength else {
                throw APIFailure(400, "'\(key)' is \(text.unicodeScalars.count) characters long; give at most \(maximumLength).")
            }
        case (.string, _), (.text, _):
            throw APIFailure(400, "'\(key)' must be a string.")
        case (.strings(let maximumCount), .array(let values)) where values.count <= maximumCount:
            guard values.allSatisfy({ if case .string = $0 { true } else { false } }) else {
                throw APIFailure(400, "'\(key)' must be a list of strings.")
            }
        case (.strings(let maximumCount), _):
            throw APIFailure(400, "'\(key)' must be a list of at most \(maximumCount) strings.")
        case (.boolean, .bool):
            break
        case (.boolean, _):
            throw APIFailure(400, "'\(key)' must be true or false.")
        case (.integer(let range), .number(let number)) where Int(exactly: number).map(range.contains) == true:
            break
        case (.integer(let range), _):
            throw APIFailure(400, "'\(key)' must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        case (.number(let range), .number(let number)) where range.contains(number):
            break
        case (.number(let range), _):
            throw APIFailure(400, "'\(key)' must be a number from \(AdminField.format(range.lowerBound)) to \(AdminField.format(range.upperBound)).")
        }
    }

    /// One `Content-Type` field naming `application/json` (any case), whose parameters, if any, are well formed
    /// and whose charset, if given, is UTF-8 (RFC 8259 §8.1). `application/jsonx`, `application/json-seq` or
    /// `text/json` are other media types and are refused, as a body in another charset would be misread.
    private static func requireJSONMediaType(_ request: AdminAPIRequest) throws {
        let fields = request.headers.filter { $0.name.lowercased() == "content-type" }.map(\.value)
        let instruction = "send the body as JSON with 'Content-Type: application/json'"
        guard let field = fields.first else { throw APIFailure(415, "The request has no Content-Type; \(instruction).") }
        guard fields.count == 1 else {
            throw APIFailure(415, "The request has \(fields.count) Content-Type fields; send one: 'Content-Type: application/json'.")
        }
        let shown = "'\(TerminalText.escape(String(field.prefix(100))))'"
        guard let mediaType = MediaType(field) else {
            throw APIFailure(415, "The Content-Type \(shown) is not a valid media type (RFC 9110 §8.3.1); \(instruction).")
        }
        guard mediaType.type == "application", mediaType.subtype == "json" else {
            throw APIFailure(415, "The body is sent as '\(mediaType.type)/\(mediaType.subtype)', which this API does not read; \(instruction).")
        }
        let charsets = mediaType.values(of: "charset")
        guard charsets.count <= 1, charsets.allSatisfy({ $0.lowercased() == "utf-8" }) else {
            throw APIFailure(415, "JSON bodies are read as UTF-8 only, and the Content-Type \(shown) names another charset; send 'charset=utf-8' or no charset.")
        }
    }

    /// The body as the contract's type for it, read once the declaration's rules have passed.
    func decode<Body: AdminRequestBody>(_ type: Body.Type) throws -> Body {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            throw APIFailure(400, "The body does not fit \(Body.operations.map(\.id).joined(separator: ", ")): \(Self.describe(error)).")
        }
    }

    /// A decoding failure in the caller's terms: which field, and what was wrong with it.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func field(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "the document" : "'\(path)'"
        }
        switch error {
        case .typeMismatch(let type, let context): return "\(field(context)) is not \(type == String.self ? "a string" : type == Bool.self ? "true or false" : type == [String].self ? "a list of strings" : "a number of the expected kind")"
        case .valueNotFound(_, let context): return "\(field(context)) is missing"
        case .keyNotFound(let key, _): return "'\(key.stringValue)' is missing"
        case .dataCorrupted(let context): return "\(field(context)): \(context.debugDescription)"
        @unknown default: return "it is not a JSON document of that shape"
        }
    }
}
