import Foundation

/// A fresh directory under the system temp dir, removed when `remove()` is called.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "pinset-test") throws {
        let base = FileManager.default.temporaryDirectory.path
        let path = "\(base)/\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.path = path
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    public func write(_ name: String, _ contents: String, mode: Int = 0o644) throws -> String {
        try write(name, Array(contents.utf8), mode: mode)
    }

    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o644) throws -> String {
        let target = file(name)
        _ = FileManager.default.createFile(atPath: target, contents: Data(bytes), attributes: [.posixPermissions: mode])
        return target
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
