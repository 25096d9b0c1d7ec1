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
