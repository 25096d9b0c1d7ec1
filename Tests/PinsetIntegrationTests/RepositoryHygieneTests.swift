import Foundation
import PinsetTestSupport
import Testing

/// What a commit must never carry: a private key, or what a run leaves behind (process ids, logs, the resolved
/// package graph, build products, a data directory).
@Suite(.enabled(if: FileManager.default.fileExists(atPath: SourceTree.path(".git")), "needs a git checkout"))
struct RepositoryHygieneTests {
    private static func trackedFiles() throws -> [String] {
        let listed = try ProcessRunner.run("git", ["-C", SourceTree.root.path, "ls-files", "-z"])
        try #require(listed.status == 0, "git ls-files: \(listed.combined)")
        return listed.stdout.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func noTrackedFileHoldsAPrivateKey() throws {
        let files = try Self.trackedFiles()
        #expect(files.count > 500)
        for file in files {
            guard let data = FileManager.default.contents(atPath: SourceTree.path(file)) else { continue }
            // A PEM block starts a line; tests that build one inside a string literal do not.
            let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            #expect(!lines.contains { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("PRIVATE KEY-----") }, "\(file) holds a private key")
        }
    }

    @Test func noTrackedFileIsARunsLeftover() throws {
        let leftovers = try Self.trackedFiles().filter { file in
            let name = (file as NSString).lastPathComponent
            return name.hasSuffix(".pid") || name.hasSuffix(".log") || name == "Package.resolved"
                || file.hasPrefix(".build") || file.hasPrefix(".pinset-data/")
        }
        #expect(leftovers.isEmpty, "tracked leftovers: \(leftovers)")
    }
}
