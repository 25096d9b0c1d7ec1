import Foundation
@testable import PinsetAdminAPI
import PinsetAdminContract
import PinsetStatus
import Testing

/// Each operation answers with one contract type, and that type is what the OpenAPI document says the answer is:
/// the same fields at every level, nothing required that the document leaves optional, and every field the
/// document requires always written.
@Suite struct AdminResponseDocumentTests {
    typealias Object = [String: Any]

    /// The types the API answers with: the contract's, and the server status's health view.
    static let types: [any AdminResponseBody.Type] = AdminResponse.bodies + [CustomerHealth.self]

    static func answerTypes(of operation: AdminOperation) -> [any AdminResponseBody.Type] {
        (types + types.map { $0.listType }).filter { $0.operations.contains(operation) }
    }

    @Test func everyOperationAnswersWithExactlyOneType() {
        for operation in AdminOperation.all where operation != .describeAPI {
            let answering = Self.answerTypes(of: operation)
            #expect(answering.count == 1, "\(operation) answers with \(answering.map { "\($0)" })")
        }
    }

    /// The document's schema of an operation's answer, its successes' properties merged (an edit answers 200 or 202).
    static func answerSchema(_ operation: AdminOperation) -> (isList: Bool, schema: Object) {
        let responses = AdminAPIDocumentTests.documented[operation.description]?["responses"] as? Object ?? [:]
        var isList = false
        var merged: Object = ["type": "object", "properties": Object()]
        var required: Set<String>?
        for status in operation.successes {
            let content = (responses[String(status)] as? Object)?["content"] as? Object
            var schema = AdminAPIDocumentTests.resolve((content?["application/json"] as? Object)?["schema"])
            if schema["type"] as? String == "array" {
                isList = true
                schema = AdminAPIDocumentTests.resolve(schema["items"])
            }
            var properties = merged["properties"] as? Object ?? [:]
            properties.merge(schema["properties"] as? Object ?? [:]) { first, _ in first }
            merged["properties"] = properties
            let these = Set(schema["required"] as? [String] ?? [])
            required = required.map { $0.intersection(these) } ?? these
        }
        merged["required"] = Array(required ?? [])
        return (isList, merged)
    }

    /// A JSON value the schema allows: every property (`full`) or only the required ones.
    static func sample(_ value: Any?, full: Bool) -> Any {
        let schema = AdminAPIDocumentTests.resolve(value)
        if let choices = schema["enum"] as? [Any], let first = choices.first { return first }
        switch schema["type"] as? String {
        case "string": return schema["format"] as? String == "date-time" ? "2026-01-02T03:04:05Z" : "text"
        case "integer": return 1
        case "number": return 0.5
        case "boolean": return true
        case "array": return [sample(schema["items"], full: full)]
        default:
            let properties = schema["properties"] as? Object ?? [:]
            let required = Set(schema["required"] as? [String] ?? [])
            var object = Object()
            for (name, property) in properties where full || required.contains(name) {
                object[name] = sample(property, full: full)
            }
            return object
        }
    }

    /// Where `encoded` has a field the schema does not name, at any level.
    static func undocumented(_ encoded: Any, _ value: Any?, at path: String) -> [String] {
        let schema = AdminAPIDocumentTests.resolve(value)
        if let list = encoded as? [Any] {
            return list.flatMap { undocumented($0, schema["items"], at: path + "[]") }
        }
        guard let object = encoded as? Object else { return [] }
        let properties = schema["properties"] as? Object ?? [:]
        return object.flatMap { name, field -> [String] in
            guard let property = properties[name] else { return ["\(path).\(name)"] }
            return undocumented(field, property, at: "\(path).\(name)")
        }
    }

    static func roundTrip<Document: AdminResponseBody>(_ type: Document.Type, _ json: Any) throws -> Object {
        let decoded = try AdminResponse.decode(type, from: Array(try JSONSerialization.data(withJSONObject: json)))
        return try JSONSerialization.jsonObject(with: Data(try AdminResponse.encode(decoded))) as? Object ?? [:]
    }

    static func storedProperties<Document: AdminResponseBody>(_ type: Document.Type, _ json: Any) throws -> Set<String> {
        let decoded = try AdminResponse.decode(type, from: Array(try JSONSerialization.data(withJSONObject: json)))
        return Set(Mirror(reflecting: decoded).children.compactMap(\.label))
    }

    @Test(arguments: AdminOperation.all.filter { $0 != .describeAPI })
    func theAnswerTypeIsTheDocumentedSchema(_ operation: AdminOperation) throws {
        let (isList, schema) = Self.answerSchema(operation)
        let single = try #require(Self.types.first { $0.operations.contains(operation) || $0.listOperations.contains(operation) })
        #expect(single.listOperations.contains(operation) == isList, "\(operation): a list in the document and the contract alike")
        let documented = Set((schema["properties"] as? Object ?? [:]).keys)
        let required = Set(schema["required"] as? [String] ?? [])
        func check<Document: AdminResponseBody>(_ type: Document.Type) throws {
            let full = Self.sample(schema, full: true)
            #expect(try Self.storedProperties(type, full) == documented, "\(type): its fields are the documented ones")
            let encoded = try Self.roundTrip(type, full)
            #expect(Self.undocumented(encoded, schema, at: "\(type)").isEmpty, "\(type) writes fields the document does not name")
            let minimal = try Self.roundTrip(type, Self.sample(schema, full: false))
            #expect(required.isSubset(of: minimal.keys), "\(type) leaves out a field the document requires: \(required.subtracting(minimal.keys))")
        }
        try check(single)
    }
}

extension AdminResponseBody {
    static var listType: any AdminResponseBody.Type { [Self].self }
}
