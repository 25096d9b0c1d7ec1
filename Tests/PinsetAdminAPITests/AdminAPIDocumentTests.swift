import Foundation
@testable import PinsetAdminAPI
import PinsetAdminContract
import PinsetStore
import PinsetTestSupport
import Testing

/// The OpenAPI document the server serves says what the contract declares: the same operations under the same
/// ids, the same fields and query parameters of the same types within the same limits, the same required fields,
/// and every error code. A field the document allows and the declaration does not (or the reverse) fails here.
@Suite struct AdminAPIDocumentTests {
    typealias Object = [String: Any]

    /// Read afresh for each use: a `[String: Any]` cannot be shared between concurrently running tests.
    static var document: Object {
        (try? JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes))) as? Object ?? [:]
    }

    /// The compiler embeds the checked-in document (C23 #embed), every byte of it.
    @Test func theServedDocumentIsTheCheckedInFile() throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: SourceTree.path("Sources/CPinsetOpenAPIDocument/openapi.json")))
        #expect(file.count > 10_000)
        #expect(OpenAPIDocument.bytes == Array(file))
    }

    static func resolve(_ value: Any?) -> Object {
        guard let object = value as? Object else { return [:] }
        guard let reference = object["$ref"] as? String else { return object }
        var current: Any = document
        for part in reference.dropFirst(2).split(separator: "/") {
            current = (current as? Object)?[String(part)] as Any
        }
        return current as? Object ?? [:]
    }

    /// The document's operations by method and path.
    static var documented: [String: Object] {
        var result: [String: Object] = [:]
        for (path, item) in document["paths"] as? [String: Object] ?? [:] {
            for (method, operation) in item where method != "parameters" {
                result["\(method.uppercased()) \(path)"] = operation as? Object
            }
        }
        return result
    }

    @Test func theDocumentHasExactlyTheDeclaredOperationsUnderTheirIDs() {
        let declared = Dictionary(uniqueKeysWithValues: AdminOperation.all.map { ($0.description, $0.id) })
        let documented = Self.documented
        #expect(Set(documented.keys) == Set(declared.keys))
        let access = Dictionary(uniqueKeysWithValues: AdminOperation.all.map { ($0.description, $0.access.description) })
        for (key, operation) in documented {
            #expect(operation["operationId"] as? String == declared[key], "\(key)")
            #expect(operation["x-pinset-access"] as? String == access[key], "\(key) documents the access it needs")
        }
        #expect(Set(AdminOperation.all.map(\.id)).count == AdminOperation.all.count, "operation ids are unique")
    }

    static func parameters(_ operation: AdminOperation) -> [Object] {
        let item = (document["paths"] as? [String: Object])?[AdminOperation.prefix + operation.path] ?? [:]
        let own = (item[operation.method.lowercased()] as? Object)?["parameters"] as? [Any] ?? []
        return ((item["parameters"] as? [Any] ?? []) + own).map(resolve)
    }

    @Test(arguments: AdminOperation.all)
    func pathAndQueryParametersAreTheDeclaredOnes(_ operation: AdminOperation) {
        let parameters = Self.parameters(operation)
        let pathNames = operation.segments.compactMap { segment -> String? in
            if case .parameter(let name) = segment { name } else { nil }
        }
        #expect(Set(parameters.filter { $0["in"] as? String == "path" }.compactMap { $0["name"] as? String }) == Set(pathNames), "\(operation)")
        let query = parameters.filter { $0["in"] as? String == "query" }
        #expect(Set(query.compactMap { $0["name"] as? String }) == Set(operation.query.map(\.name)), "\(operation)")
        for field in operation.query {
            let schema = Self.resolve(query.first { $0["name"] as? String == field.name }?["schema"])
            Self.expect(schema, matches: field, in: operation, query: true)
        }
    }

    /// The body's schema, with the alternatives of a `oneOf` merged: each field's own rules are what matter here.
    static func bodySchema(_ operation: AdminOperation) -> (properties: [String: Object], required: Set<String>?)? {
        let item = (document["paths"] as? [String: Object])?[AdminOperation.prefix + operation.path] ?? [:]
        guard let body = (item[operation.method.lowercased()] as? Object)?["requestBody"] as? Object else { return nil }
        let schema = resolve(((body["content"] as? Object)?["application/json"] as? Object)?["schema"])
        let alternatives = (schema["oneOf"] as? [Any])?.map(resolve) ?? [schema]
        var properties: [String: Object] = [:]
        for alternative in alternatives {
            #expect(alternative["additionalProperties"] as? Bool == false, "\(operation): unknown fields are refused, so the schema says so")
            for (name, property) in alternative["properties"] as? Object ?? [:] { properties[name] = resolve(property) }
        }
        // Alternatives say which fields go together; a required field is one every alternative requires.
        let required = schema["oneOf"] == nil ? Set(schema["required"] as? [String] ?? []) : nil
        return (properties, required)
    }

    @Test(arguments: AdminOperation.all)
    func bodyFieldsAreTheDeclaredOnesWithTheirLimits(_ operation: AdminOperation) throws {
        guard let schema = Self.bodySchema(operation) else {
            #expect(operation.body.isEmpty, "\(operation) declares a body the document does not describe")
            return
        }
        #expect(Set(schema.properties.keys) == Set(operation.body.map(\.name)), "\(operation)")
        if let required = schema.required {
            #expect(required == Set(operation.body.filter(\.required).map(\.name)), "\(operation)")
        }
        for field in operation.body {
            Self.expect(schema.properties[field.name] ?? [:], matches: field, in: operation, query: false)
        }
    }

    /// The document may state a stricter lower bound that a rule of the admin library enforces (a signing identity
    /// must outlive the bundles it signs); every other bound is the declaration's.
    static func expect(_ schema: Object, matches field: AdminField, in operation: AdminOperation, query: Bool) {
        let what = "\(operation) '\(field.name)'"
        switch field.kind {
        case .string:
            #expect(schema["type"] as? String == "string", "\(what)")
        case .text(let maximumLength):
            #expect(schema["type"] as? String == "string" && (schema["maxLength"] as? Int) == maximumLength, "\(what)")
        case .boolean where query:
            #expect(schema["type"] as? String == "string" && Set(schema["enum"] as? [String] ?? []) == ["true", "false"], "\(what)")
        case .boolean:
            #expect(schema["type"] as? String == "boolean", "\(what)")
        case .strings(let maximumCount):
            #expect(schema["type"] as? String == "array" && (schema["maxItems"] as? Int) == maximumCount, "\(what)")
            #expect(resolve(schema["items"])["type"] as? String == "string", "\(what)")
        case .integer(let range):
            #expect(schema["type"] as? String == "integer", "\(what)")
            #expect((schema["maximum"] as? Int) == range.upperBound, "\(what)")
            let minimum = schema["minimum"] as? Int
            #expect(minimum.map { $0 >= range.lowerBound && $0 <= range.upperBound } == true, "\(what): minimum \(minimum.map(String.init) ?? "none")")
        case .number(let range):
            #expect(schema["type"] as? String == "number", "\(what)")
            #expect((schema["minimum"] as? Double) == range.lowerBound && (schema["maximum"] as? Double) == range.upperBound, "\(what)")
        }
    }

    @Test(arguments: AdminOperation.all)
    func theDocumentedAnswersIncludeTheDeclaredSuccesses(_ operation: AdminOperation) {
        let responses = Set((Self.documented[operation.description]?["responses"] as? Object ?? [:]).keys)
        for status in operation.successes {
            #expect(responses.contains(String(status)), "\(operation) answers \(status)")
        }
        if operation.access != .anyone {
            #expect(responses.isSuperset(of: ["400", "401", "429"]), "\(operation)")
        }
    }

    @Test func everyErrorCodeIsDocumentedAndEveryStoreRefusalHasOne() {
        let schemas = (Self.document["components"] as? Object)?["schemas"] as? Object
        let error = Self.resolve((Self.resolve(schemas?["Error"])["properties"] as? Object)?["error"])
        let code = Self.resolve((error["properties"] as? Object)?["code"])
        #expect(code["enum"] as? [String] == AdminErrorCode.all.map(\.rawValue))
        #expect(Set(error["required"] as? [String] ?? []) == ["status", "code", "message"])
        let known = Set(AdminErrorCode.all)
        for storeCode in StoreError.Code.allCases {
            let refusal = AdminAPIError(StoreError(storeCode, "x"))
            #expect(known.contains(refusal.code), "\(storeCode) is sent as the unknown code \(refusal.code)")
            #expect(refusal.status == 500 ? refusal.code == .internalError : refusal.code.rawValue == storeCode.rawValue, "\(storeCode)")
        }
    }

    @Test func routesComeFromTheDeclaration() {
        #expect(AdminRoute(method: "GET", segments: ["customers", "acme"]) == .operation(.getCustomer, parameters: ["customer": "acme"]))
        #expect(AdminRoute(method: "PUT", segments: ["customers", "acme"]) == .methodNotAllowed(allowed: [.getCustomer, .updateCustomer, .removeCustomer]))
        #expect(AdminRoute.allowField([.removeCustomer, .getCustomer, .updateCustomer]) == "GET, PATCH, DELETE")
        #expect(AdminRoute(method: "GET", segments: ["customers", "acme", "nothing"]) == .notFound)
        #expect(AdminOperation.editPins.target(["customer": "a/b", "hostname": "x y"], query: [("all", "true"), ("skip", nil)])
            == "/api/v1/customers/a%2Fb/hosts/x%20y/pins?all=true")
        // Every declared path is reachable under its own method and no other operation shadows it.
        for operation in AdminOperation.all {
            let segments = operation.segments.map { segment -> String in
                switch segment {
                case .literal(let text): text
                case .parameter: "p"
                }
            }
            guard case .operation(let routed, _) = AdminRoute(method: operation.method, segments: segments) else {
                Issue.record("\(operation) is not routed")
                continue
            }
            #expect(routed == operation)
        }
    }
}

extension AdminOperation: CustomTestStringConvertible {
    public var testDescription: String { description }
}

/// Each request body type has exactly its operations' declared fields, of their declared kinds, with the required
/// ones not optional: the client encodes what the server's checks expect, and decodes what they let through.
@Suite struct AdminRequestBodyTests {
    /// A JSON value of the field's kind, within its limits.
    static func sample(_ field: AdminField) -> String {
        switch field.kind {
        case .string, .text: #""text""#
        case .strings: #"["text"]"#
        case .boolean: "true"
        case .integer(let range): String(range.lowerBound)
        case .number(let range): String(range.lowerBound)
        }
    }

    @Test func everyOperationWithABodyHasOneTypeForIt() {
        for operation in AdminOperation.all where !operation.body.isEmpty {
            let types = AdminRequest.bodies.filter { $0.operations.contains(operation) }
            #expect(types.count == 1, "\(operation) has \(types.count) body types")
        }
        for type in AdminRequest.bodies {
            #expect(type.operations.allSatisfy { !$0.body.isEmpty && $0.body == type.operations[0].body }, "\(type) serves operations with one declaration")
        }
    }

    /// The keys `json` decoded into `type` encodes to, and the type's own stored properties.
    static func roundTrip<Body: AdminRequestBody>(_ type: Body.Type, _ json: String) throws -> (keys: Set<String>, properties: Set<String>) {
        let decoded = try JSONDecoder().decode(type, from: Data(json.utf8))
        let encoded = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(decoded)) as? [String: Any] ?? [:]
        return (Set(encoded.keys), Set(Mirror(reflecting: decoded).children.compactMap(\.label)))
    }

    static func object(_ fields: [AdminField]) -> String {
        "{" + fields.map { "\"\($0.name)\": \(sample($0))" }.joined(separator: ", ") + "}"
    }

    @Test func eachBodyTypeHasTheDeclaredFieldsOfTheirKinds() throws {
        for type in AdminRequest.bodies {
            let fields = type.operations[0].body
            let names = Set(fields.map(\.name)), required = fields.filter(\.required)
            let full = try Self.roundTrip(type, Self.object(fields))
            #expect(full.keys == names && full.properties == names, "\(type)")
            let minimal = try Self.roundTrip(type, Self.object(required))
            #expect(minimal.keys == Set(required.map(\.name)), "\(type): a field left nil is left out, never sent as null")
            for field in required {
                #expect(throws: (any Error).self, "\(type) '\(field.name)' is required") {
                    try Self.roundTrip(type, Self.object(required.filter { $0.name != field.name }))
                }
            }
        }
    }

    /// The admin API's table in docs/review.md, which operators read, names exactly the declared operations: an
    /// operation added to the contract without a row (or a row for one that is gone) fails here.
    @Test func theReviewGuideListsExactlyTheDeclaredOperations() throws {
        let guide = try String(contentsOfFile: SourceTree.path("docs/review.md"), encoding: .utf8)
        let rows = guide.split(separator: "\n").filter { $0.hasPrefix("| `") && $0.contains(" \(AdminOperation.prefix)/") }
        let named = try Regex(#"`(GET|POST|PUT|PATCH|DELETE) (/api/v1/[^`\[?]*)"#)
        var listed: Set<String> = []
        for row in rows {
            // The first cell only: descriptions may mention other calls.
            let cell = row.dropFirst().prefix { $0 != "|" }
            for match in cell.matches(of: named) {
                listed.insert("\(match.output[1].substring ?? "") \(match.output[2].substring ?? "")")
            }
        }
        #expect(rows.count > 20, "the table was found")
        let declared = Set(AdminOperation.all.map(\.description))
        #expect(declared.subtracting(listed).isEmpty, "declared but not in docs/review.md: \(declared.subtracting(listed).sorted())")
        #expect(listed.subtracting(declared).isEmpty, "in docs/review.md but not declared: \(listed.subtracting(declared).sorted())")
    }
}
