import Foundation

/// Files of this checkout, for tests that compare what is compiled in or shipped with the file it came from.
public enum SourceTree {
    /// The package's root directory.
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The absolute path of `relativePath`, a path from the package's root.
    public static func path(_ relativePath: String) -> String {
        root.appendingPathComponent(relativePath).path
    }
}

/// The signed payload's published JSON Schema (`docs/bundle-payload.schema.json`), applied by an independent
/// validator: Python's jsonschema.
public enum PublishedPayloadSchema {
    /// Validates the JSON file at `path`; a status of 0 means it conforms, and stderr says where it does not.
    public static func validate(payloadAt path: String) throws -> ProcessRunner.Output {
        let script = "import json,sys,jsonschema; jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))"
        return try ProcessRunner.run("python3", ["-c", script, SourceTree.path("docs/bundle-payload.schema.json"), path])
    }
}
