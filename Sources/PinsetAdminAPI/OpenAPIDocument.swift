import CPinsetOpenAPIDocument

/// The API's OpenAPI 3 document (`Sources/CPinsetOpenAPIDocument/openapi.json`, embedded by the C compiler and served
/// at `/api/v1/openapi.json`).
enum OpenAPIDocument {
    static let bytes: [UInt8] = {
        var length = 0
        let start = pinset_openapi_document(&length)
        return Array(UnsafeBufferPointer(start: start, count: length))
    }()
}
