import Foundation

extension ServerStatus {
    /// The document as served: pretty-printed, keys sorted, dates in ISO 8601 to the second, ending in a newline.
    ///
    /// Keys are sorted as `JSONSerialization` sorts them (digits by value, letters without regard to case:
    /// `shop-9` before `shop-10`, `signersNotBefore` before `signerWarningDays`), the order `/status` has always
    /// had and scripts may rely on; `JSONEncoder` sorts by code point, so its output is written out again.
    public func encodedDocument() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601))
        }
        let object = try JSONSerialization.jsonObject(with: try encoder.encode(self))
        return [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])) + [UInt8(ascii: "\n")]
    }

    /// Reads a document written by ``encodedDocument()``.
    public static func decode(_ document: Data) throws -> ServerStatus {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an ISO 8601 date")
            }
            return date
        }
        return try decoder.decode(ServerStatus.self, from: document)
    }
}
