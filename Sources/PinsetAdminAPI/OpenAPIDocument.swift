/// The API's OpenAPI 3 document (`Resources/openapi.json`, kept beside the code it describes and served at
/// `/api/v1/openapi.json`).
enum OpenAPIDocument {
    static let bytes: [UInt8] = PackageResources.openapi_json
}
