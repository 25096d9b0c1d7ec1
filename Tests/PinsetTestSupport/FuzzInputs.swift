import Foundation

/// The fuzzers' committed inputs, replayed by the normal test suite: every file kept in
/// `Fuzz/regressions/<target>/` after a fix, then the seed corpus in `Fuzz/corpus/<target>/`.
public enum FuzzInputs {
    public static func paths(for target: String) -> [String] {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        var paths: [String] = []
        for kind in ["regressions", "corpus"] {
            let directory = root.appendingPathComponent("Fuzz/\(kind)/\(target)").path
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            paths += names.filter { !$0.hasPrefix(".") }.sorted().map { "\(directory)/\($0)" }
        }
        return paths
    }
}
